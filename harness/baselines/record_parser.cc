// parse_baselines(): a baseline file (CSV or JSON Lines) into typed records, every bad
// record reported at once with its line and field.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <set>

#include "harness/baselines/baselines.h"
#include "harness/baselines/text_fields.h"
#include "harness/common/error.h"

namespace isoharness::baselines {

namespace {

const std::vector<std::string>& required_columns() {
  static const std::vector<std::string> cols = {"task", "duration_s", "recorded_at", "runtime", "node_class"};
  return cols;
}

struct Collector {
  const std::string& path;
  std::vector<Diagnostic> errors;
  void add(int line, const std::string& field, std::string message) {
    errors.push_back({path, line, 0, field, std::move(message)});
  }
};

using Fields = std::map<std::string, std::string>;

const std::string* find(const Fields& f, const std::string& key) {
  auto it = f.find(key);
  return it == f.end() ? nullptr : &it->second;
}

bool is_name(const std::string& s) {
  static const std::regex re("[A-Za-z0-9._-]+");
  return std::regex_match(s, re);
}

void read_duration(const std::string& text, int line, Collector& c, BaselineRecord& r) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) {
    c.add(line, "duration_s", fmt::format("'{}' is not a number of seconds (e.g. 5400 or 812.5)", text));
  } else if (v < 0) {
    c.add(line, "duration_s",
          fmt::format("{} is negative: a duration is a positive number of seconds", text));
  } else if (v == 0) {
    c.add(line, "duration_s", "0: a duration is a positive number of seconds");
  } else {
    r.duration_s = v;
  }
}

void read_time(const std::string& text, int line, const ParseOptions& o, Collector& c, BaselineRecord& r) {
  const auto t = normalise_time(text);
  if (!t) {
    c.add(
        line, "recorded_at",
        fmt::format("'{}' is not an ISO 8601 date or time (e.g. 2026-03-03 or 2026-03-03T10:00:00Z)", text));
  } else if (!o.now_utc.empty() && *t > o.now_utc) {
    c.add(line, "recorded_at", fmt::format("{} is in the future (now is {})", text, o.now_utc));
  } else if (!o.at_utc.empty() && *t > o.at_utc) {
    c.add(line, "recorded_at", fmt::format("{} is after the target date --at {}", text, o.at_utc));
  } else {
    r.recorded_at = text;
    r.recorded_utc = *t;
  }
}

void read_name(const std::string& text, const char* field, int line, Collector& c, std::string& out) {
  if (is_name(text))
    out = text;
  else
    c.add(
        line, field,
        fmt::format("'{}' is not a name (letters, digits, '.', '_' and '-', e.g. runc, gvisor, tier)", text));
}

void read_mix(const std::string& text, int line, const ParseOptions& o, Collector& c, BaselineRecord& r) {
  if (text.empty() || text == "default") return;
  if (o.mixes && !o.mixes->count(text)) {
    const std::string known = fmt::format("{}", fmt::join(*o.mixes, ", "));
    c.add(line, "mix",
          fmt::format("unknown mix '{}' (the scenario declares: {})", text, known.empty() ? "none" : known));
    return;
  }
  r.mix = text;
}

// deployment: empty = names none; else BACKEND/PROFILE, as --deployment takes it.
void read_deployment(const std::string& text, int line, Collector& c, BaselineRecord& r) {
  if (text.empty()) return;
  if (!parse_deployment(text)) {
    c.add(line, "deployment",
          fmt::format("'{}' is not BACKEND/PROFILE (the backend and the deployment profile's name, "
                      "e.g. hawk/staging or local/local-2core)",
                      text));
    return;
  }
  r.deployment = text;
}

// compute_fraction: empty = the run's default; else a number in [0, 1].
void read_fraction(const std::string& text, int line, Collector& c, BaselineRecord& r) {
  if (text.empty()) return;
  char* end = nullptr;
  const double f = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(f >= 0 && f <= 1)) {
    c.add(line, "compute_fraction", fmt::format("'{}' is not a fraction between 0 and 1", text));
    return;
  }
  r.compute_fraction = f;
}

// One record's fields. Missing fields are reported when report_missing (CSV reports a
// missing column once, on the header); fields in `reported` were already found bad and left
// out of f, and the record is not kept.
void read_record(const Fields& f, int line, const ParseOptions& o, bool report_missing,
                 const std::set<std::string>& reported, Collector& c, BaselineFile& file) {
  const std::size_t before = c.errors.size();
  BaselineRecord r;
  r.line = line;
  r.fields = f;
  for (const auto& col : required_columns())
    if (!find(f, col) && report_missing && !reported.count(col)) c.add(line, col, "missing");
  const std::string* item = find(f, "item");
  if (!item || item->empty()) item = find(f, "sample_id");
  if (!item && report_missing && !reported.count("item") && !reported.count("sample_id"))
    c.add(line, "item", "missing (an item or sample_id is required)");
  if (const auto* v = find(f, "task")) {
    if (v->empty()) c.add(line, "task", "empty");
    r.task = *v;
  }
  if (item) {
    if (item->empty()) c.add(line, "item", "empty (an item or sample_id is required)");
    r.item = *item;
  }
  if (const auto* v = find(f, "human")) r.human = *v;
  if (const auto* v = find(f, "duration_s")) read_duration(*v, line, c, r);
  if (const auto* v = find(f, "recorded_at")) read_time(*v, line, o, c, r);
  if (const auto* v = find(f, "runtime")) read_name(*v, "runtime", line, c, r.runtime);
  if (const auto* v = find(f, "node_class")) read_name(*v, "node_class", line, c, r.node_class);
  if (const auto* v = find(f, "mix")) read_mix(*v, line, o, c, r);
  if (const auto* v = find(f, "compute_fraction")) read_fraction(*v, line, c, r);
  if (const auto* v = find(f, "deployment")) read_deployment(*v, line, c, r);
  if (c.errors.size() == before && reported.empty()) file.records.push_back(std::move(r));
}

std::vector<std::string_view> lines_of(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (line.ends_with('\r')) line.remove_suffix(1);
    out.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

std::string not_utf8(std::string_view value, std::size_t at) {
  return fmt::format("byte 0x{:02X} at offset {} is not UTF-8 (save the file as UTF-8)",
                     static_cast<unsigned char>(value[at]), at);
}

void parse_csv(const std::vector<std::string_view>& lines, const ParseOptions& o, Collector& c,
               BaselineFile& file) {
  std::size_t h = 0;
  while (h < lines.size() && blank(lines[h])) ++h;
  std::string error;
  const auto header = split_csv_line(lines[h], error);
  const int header_line = static_cast<int>(h + 1);
  if (!header) return c.add(header_line, "header", error);
  for (const auto& col : *header) {
    const std::size_t bad = first_invalid_utf8(col);
    if (bad != std::string::npos)
      c.add(header_line, "header", not_utf8(col, bad));
    else if (col.empty())
      c.add(header_line, "header", "a column has no name");
    else if (std::count(header->begin(), header->end(), col) > 1)
      c.add(header_line, col, "column named twice");
    else
      file.columns.push_back(col);
  }
  for (const auto& col : required_columns())
    if (!std::count(header->begin(), header->end(), col)) c.add(header_line, col, "missing column");
  if (!std::count(header->begin(), header->end(), "item") &&
      !std::count(header->begin(), header->end(), "sample_id"))
    c.add(header_line, "item", "missing column (item or sample_id)");
  for (std::size_t i = h + 1; i < lines.size(); ++i) {
    if (blank(lines[i])) continue;
    const int line = static_cast<int>(i + 1);
    const auto cells = split_csv_line(lines[i], error);
    if (!cells) {
      c.add(line, "", error);
      continue;
    }
    if (cells->size() != header->size()) {
      c.add(line, "", fmt::format("{} fields, the header has {}", cells->size(), header->size()));
      continue;
    }
    Fields f;
    std::set<std::string> reported;
    for (std::size_t k = 0; k < cells->size(); ++k) {
      const std::size_t bad = first_invalid_utf8((*cells)[k]);
      if (bad != std::string::npos) {
        c.add(line, (*header)[k], not_utf8((*cells)[k], bad));
        reported.insert((*header)[k]);
      } else {
        f[(*header)[k]] = (*cells)[k];
      }
    }
    read_record(f, line, o, false, reported, c, file);
  }
}

// A JSON value as the text a CSV cell would hold; nullopt for arrays and objects.
std::optional<std::string> cell_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return std::string();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return std::nullopt;
}

void parse_json_line(std::string_view raw, int line, const ParseOptions& o, Collector& c,
                     BaselineFile& file) {
  const std::size_t bad = first_invalid_utf8(raw);
  const auto doc = nlohmann::json::parse(
      bad == std::string_view::npos ? std::string(raw) : replace_invalid_utf8(raw), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    c.add(line, "", bad != std::string_view::npos ? not_utf8(raw, bad) : "not a JSON object");
    return;
  }
  Fields f;
  std::set<std::string> reported;
  for (const auto& [key, value] : doc.items()) {
    if (std::find(file.columns.begin(), file.columns.end(), key) == file.columns.end())
      file.columns.push_back(key);
    const auto text = cell_text(value);
    if (!text) {
      c.add(line, key, "must be a string or a number");
      reported.insert(key);
    } else if (bad != std::string_view::npos && (text->find("\xEF\xBF\xBD") != std::string::npos ||
                                                 key.find("\xEF\xBF\xBD") != std::string::npos)) {
      c.add(line, key, not_utf8(raw, bad));
      reported.insert(key);
    } else {
      f[key] = *text;
    }
  }
  if (reported.empty() && bad != std::string_view::npos) {
    c.add(line, "", not_utf8(raw, bad));
    reported.insert("");
  }
  read_record(f, line, o, true, reported, c, file);
}

}  // namespace

BaselineFile parse_baselines(std::string_view text, const std::string& path, const ParseOptions& options) {
  BaselineFile file;
  file.path = path;
  Collector c{path, {}};
  const auto lines = lines_of(text);
  const auto first = std::find_if(lines.begin(), lines.end(), [](std::string_view l) { return !blank(l); });
  if (first == lines.end()) throw UserError({Diagnostic{path, 0, 0, "", "no records: the file is empty"}});
  file.format = first->find_first_not_of(" \t") != std::string_view::npos &&
                        (*first)[first->find_first_not_of(" \t")] == '{'
                    ? "jsonl"
                    : "csv";
  if (file.format == "csv") {
    parse_csv(lines, options, c, file);
  } else {
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (!blank(lines[i])) parse_json_line(lines[i], static_cast<int>(i + 1), options, c, file);
  }
  if (c.errors.empty() && file.records.empty())
    c.add(0, "", "no records: the file has a header and nothing else");
  if (!c.errors.empty()) throw UserError(std::move(c.errors));
  return file;
}

}  // namespace isoharness::baselines
