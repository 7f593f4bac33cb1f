#include "harness/scenario/source_map.h"

#include <fstream>

namespace isoharness::scenario {

Mark SourceMap::find(std::string_view pointer) const {
  std::string p(pointer);
  while (true) {
    auto it = marks_->find(p);
    if (it != marks_->end()) return it->second;
    if (p.empty()) return {};
    auto slash = p.rfind('/');
    p = slash == std::string::npos ? std::string() : p.substr(0, slash);
  }
}

void SourceMap::set(const std::string& pointer, Mark mark) {
  if (marks_.use_count() > 1) marks_ = std::make_shared<Marks>(*marks_);
  (*marks_)[pointer] = mark;
}

Diagnostic SourceMap::diagnostic(std::string_view pointer, std::string item, std::string message) const {
  Mark m = find(pointer);
  return Diagnostic{file_, m.line, m.column, std::move(item), std::move(message)};
}

std::string pointer_join(std::string_view base, std::string_view token) {
  std::string out(base);
  out += '/';
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string pointer_join(std::string_view base, std::size_t index) {
  return pointer_join(base, std::to_string(index));
}

std::string read_input_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError({Diagnostic{path, 0, 0, "", "cannot read file"}});
  std::string text;
  text.resize(kMaxYamlBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxYamlBytes)
    throw UserError({Diagnostic{path, 0, 0, "", "file is larger than 16 MiB"}});
  return text;
}

YamlDocument load_yaml_file(const std::string& path) {
  return parse_yaml(read_input_file(path), path);
}

std::string brief_json(const nlohmann::json& value, std::size_t max_chars) {
  std::string s = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > max_chars) s = s.substr(0, max_chars - 3) + "...";
  return s;
}

}  // namespace isoharness::scenario
