#include "harness/scenario/source_map.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>

namespace isoharness::scenario {

Mark SourceMap::find(std::string_view pointer) const {
  std::string p(pointer);
  while (true) {
    auto it = marks_.find(p);
    if (it != marks_.end()) return it->second;
    if (p.empty()) return {};
    auto slash = p.rfind('/');
    p = slash == std::string::npos ? std::string() : p.substr(0, slash);
  }
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

namespace {

Mark to_mark(const YAML::Mark& m) {
  if (m.line < 0) return {};
  return Mark{m.line + 1, m.column + 1};
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// [-+]?[0-9]+
bool looks_int(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return !s.empty() && std::all_of(s.begin(), s.end(), is_digit);
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool looks_float(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  std::size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++int_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    std::size_t exp_digits = 0;
    while (i < s.size() && is_digit(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

// YAML 1.2 core schema resolution of a plain (unquoted, untagged) scalar.
nlohmann::json plain_scalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (looks_int(s)) {
    std::int64_t v = 0;
    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
    auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size()) return v;
    return s;  // out of range: keep the text
  }
  if (s.size() <= 60 && looks_float(s)) {
    try {
      return std::stod(s);
    } catch (const std::exception&) {
      return s;
    }
  }
  return s;
}

class Converter {
 public:
  Converter(SourceMap& source, std::vector<Diagnostic>& errors) : source_(source), errors_(errors) {}

  nlohmann::json convert(const YAML::Node& node, const std::string& pointer) {
    if (++nodes_ > kMaxYamlNodes) {
      if (!too_large_reported_) {
        too_large_reported_ = true;
        errors_.push_back(
            source_.diagnostic(pointer, "", "document has too many nodes (aliases expanding?)"));
      }
      return nullptr;
    }
    source_.set(pointer, to_mark(node.Mark()));
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return nullptr;
      case YAML::NodeType::Scalar: {
        const std::string& tag = node.Tag();
        if (tag == "!" || tag == "tag:yaml.org,2002:str") return node.Scalar();
        return plain_scalar(node.Scalar());
      }
      case YAML::NodeType::Sequence: {
        nlohmann::json out = nlohmann::json::array();
        std::size_t i = 0;
        for (const auto& child : node) out.push_back(convert(child, pointer_join(pointer, i++)));
        return out;
      }
      case YAML::NodeType::Map: {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& kv : node) {
          if (!kv.first.IsScalar()) {
            Mark m = to_mark(kv.first.Mark());
            errors_.push_back({source_.file(), m.line, m.column, "", "mapping keys must be plain strings"});
            continue;
          }
          const std::string key = kv.first.Scalar();
          const std::string child = pointer_join(pointer, key);
          if (out.contains(key)) {
            Mark m = to_mark(kv.first.Mark());
            errors_.push_back({source_.file(), m.line, m.column, "",
                               "duplicate key '" + key + "' (each key may appear once in a mapping)"});
            continue;
          }
          // The key's own position is the most useful place to point at.
          out[key] = convert(kv.second, child);
          Mark key_mark = to_mark(kv.first.Mark());
          if (key_mark.line > 0) source_.set(child, key_mark);
        }
        return out;
      }
    }
    return nullptr;
  }

 private:
  SourceMap& source_;
  std::vector<Diagnostic>& errors_;
  std::size_t nodes_ = 0;
  bool too_large_reported_ = false;
};

}  // namespace

YamlDocument parse_yaml(std::string_view text, const std::string& file) {
  YamlDocument doc{nullptr, SourceMap(file)};
  if (text.size() > kMaxYamlBytes) {
    throw UserError({Diagnostic{file, 0, 0, "", "file is larger than 16 MiB"}});
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    Mark m = to_mark(e.mark);
    throw UserError({Diagnostic{file, m.line, m.column, "", "YAML syntax error: " + e.msg}});
  }
  std::vector<Diagnostic> errors;
  Converter converter(doc.source, errors);
  doc.value = converter.convert(root, "");
  if (!errors.empty()) throw UserError(std::move(errors));
  return doc;
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
