#include "harness/verify/runtime_escapes.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "harness/common/install_paths.h"
#include "harness/common/text.h"
#include "harness/verify/debian_version.h"

namespace isoharness::verify {
namespace {

using common::trim;

constexpr std::size_t kMaxTableBytes = 1 << 20;

std::vector<std::string_view> split(std::string_view s, char by) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0;;) {
    const auto next = s.find(by, at);
    out.push_back(trim(s.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at)));
    if (next == std::string_view::npos) return out;
    at = next + 1;
  }
}

// "major.minor" of a version's upstream part (after any epoch); "" when it has none.
std::string branch_of(std::string_view v) {
  if (const auto colon = v.find(':'); colon != std::string_view::npos) v.remove_prefix(colon + 1);
  std::size_t i = 0, dots = 0;
  for (; i < v.size(); ++i) {
    if (v[i] == '.' && ++dots == 2) break;
    if (v[i] != '.' && (v[i] < '0' || v[i] > '9')) break;
  }
  const std::string_view b = v.substr(0, i);
  const auto dot = b.find('.');
  return dot != std::string_view::npos && dot > 0 && dot + 1 < b.size() ? std::string(b) : "";
}

// The upstream part of a package version: without its epoch and its last "-revision".
std::string_view upstream_of(std::string_view v) {
  if (const auto colon = v.find(':'); colon != std::string_view::npos) v.remove_prefix(colon + 1);
  const auto dash = v.rfind('-');
  return dash == std::string_view::npos ? v : v.substr(0, dash);
}

bool is_check_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == ':' || c == '-')) return false;
  return true;
}

std::string parse_carriers(std::string_view field, RuntimeEscape& out) {
  if (field.empty()) return "";
  for (auto c : split(field, ',')) {
    const auto eq = c.find('=');
    if (eq == std::string_view::npos || eq == 0 || !debian_version_shape(c.substr(eq + 1)))
      return "package '" + std::string(c) + "' is not distribution/suite=version";
    out.carriers.push_back({std::string(c.substr(0, eq)), std::string(c.substr(eq + 1))});
  }
  return "";
}

// One table line into `out`; "" or why it is not one.
std::string parse_row(std::string_view line, bool branched, RuntimeEscape& out) {
  const auto fields = split(line, '|');
  if (fields.size() < 4 || fields.size() > 6)
    return "needs four to six fields separated by '|' (CVE | what | fixed | packages [| source [| check]])";
  if (fields[0].rfind("CVE-", 0) != 0 || fields[0].size() < 13 || fields[0].size() > 32)
    return "the first field is not a CVE name";
  out.cve = fields[0];
  out.what = fields[1];
  for (auto v : split(fields[2], ',')) {
    if (!debian_version_shape(v) || (branched && branch_of(v).empty()))
      return "fixed version '" + std::string(v) + "' is not a version";
    out.fixed.emplace_back(v);
  }
  if (std::string why = parse_carriers(fields[3], out); !why.empty()) return why;
  if (fields.size() > 4) out.source = fields[4];
  if (fields.size() > 5) {
    if (!is_check_name(fields[5])) return "the check '" + std::string(fields[5]) + "' is not a check name";
    out.seen_by = fields[5];
  }
  return "";
}

struct Directives {
  bool none = false;  // escapes: none
  bool reviewed = false;
};

// A `key: value` line (reviewed, component, escapes); "" or why it is wrong. `handled` is
// false when the line is not a directive.
std::string parse_directive(std::string_view line, RuntimeComponent component, EscapeTable& t, Directives& d,
                            bool& handled) {
  handled = true;
  const auto colon = line.find(':');
  const std::string_view key = trim(line.substr(0, colon == std::string_view::npos ? 0 : colon));
  const std::string_view value = colon == std::string_view::npos ? "" : trim(line.substr(colon + 1));
  if (key == "reviewed") {
    const auto day = day_of_date(value);
    if (!day) return "reviewed: needs a date YYYY-MM-DD";
    t.reviewed = value;
    t.reviewed_day = *day;
    d.reviewed = true;
    return "";
  }
  if (key == "component") {
    return component_named(value) == component
               ? ""
               : fmt::format("component: names '{}', but this is the {} table", value,
                             component_name(component));
  }
  if (key == "escapes") {
    d.none = value == "none";
    return d.none ? "" : "escapes: may only say none";
  }
  handled = false;
  return "";
}

}  // namespace

std::string_view component_name(RuntimeComponent c) {
  switch (c) {
    case RuntimeComponent::containerd:
      return "containerd";
    case RuntimeComponent::runc:
      return "runc";
    case RuntimeComponent::crun:
      return "crun";
    case RuntimeComponent::runsc:
      return "runsc";
    case RuntimeComponent::nvidia_container_toolkit:
      break;
  }
  return "nvidia-container-toolkit";
}

std::optional<RuntimeComponent> component_named(std::string_view name) {
  for (auto c : kRuntimeComponents)
    if (component_name(c) == name) return c;
  return std::nullopt;
}

Expected<EscapeTable> parse_escape_table(RuntimeComponent component, std::string_view text,
                                         std::string_view where) {
  EscapeTable table;
  table.component = component;
  Directives d;
  std::string problems;
  auto problem = [&](int number, const std::string& why) {
    problems += fmt::format("{}{}:{}: {}", problems.empty() ? "" : "; ", where, number, why);
  };
  std::istringstream in{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string_view l = trim(line);
    if (l.empty() || l.front() == '#') continue;
    if (l.find('|') == std::string_view::npos) {
      bool handled = false;
      const std::string why = parse_directive(l, component, table, d, handled);
      if (!handled)
        problem(number, "neither an escape (fields separated by '|') nor reviewed:, component: or escapes:");
      if (!why.empty()) problem(number, why);
      continue;
    }
    RuntimeEscape row;
    const std::string why = parse_row(l, component != RuntimeComponent::runsc, row);
    if (why.empty())
      table.escapes.push_back(std::move(row));
    else
      problem(number, why);
  }
  const std::string name = fmt::format("the {} escape table {}", component_name(component), where);
  if (!problems.empty()) return make_error(name + " is malformed: " + problems);
  if (!d.reviewed) return make_error(name + " has no reviewed: YYYY-MM-DD line");
  if (table.escapes.empty() && !d.none)
    return make_error(name + " lists no escape (and does not say escapes: none)");
  if (!table.escapes.empty() && d.none) return make_error(name + " says escapes: none but lists escapes");
  table.source = where;
  return table;
}

const Expected<EscapeTable>& EscapeTables::of(RuntimeComponent c) const {
  static const Expected<EscapeTable> missing = make_error("no escape table was read");
  const auto it = tables.find(c);
  return it == tables.end() ? missing : it->second;
}

EscapeTables read_escape_tables(const std::string& dir) {
  EscapeTables out;
  for (auto c : kRuntimeComponents) {
    const std::string path = fmt::format("{}/{}.txt", dir, component_name(c));
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      out.tables.emplace(
          c, make_error(fmt::format("the {} escape table {} cannot be read", component_name(c), path)));
      continue;
    }
    std::string text(kMaxTableBytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxTableBytes)
      out.tables.emplace(
          c, make_error(fmt::format("the {} escape table {} is larger than 1 MiB", component_name(c), path)));
    else
      out.tables.emplace(c, parse_escape_table(c, text, path));
  }
  return out;
}

const EscapeTables& shipped_escape_tables() {
  static const EscapeTables tables = [] {
    const ResolvedPath where = resolve_path(kRuntimeEscapes);
    if (where.found()) return read_escape_tables(where.path);
    EscapeTables none;
    for (auto c : kRuntimeComponents)
      none.tables.emplace(c, make_error("the runtime escape tables are " + where.describe()));
    return none;
  }();
  return tables;
}

std::string upstream_as_debian(std::string_view v) {
  if (!v.empty() && v.front() == 'v') v.remove_prefix(1);
  std::string out(v);
  for (auto& c : out)
    if (c == '-') c = '~';
  return out;
}

std::string fixed_by(const RuntimeEscape& escape, std::string_view upstream, bool branched) {
  const std::string branch = branched ? branch_of(upstream) : "";
  const std::string* latest = nullptr;
  const std::string* earliest = nullptr;
  for (const auto& f : escape.fixed) {
    if (!branch.empty() && branch_of(f) == branch) return compare_debian_versions(upstream, f) >= 0 ? f : "";
    if (!latest || compare_debian_versions(f, *latest) > 0) latest = &f;
    if (!earliest || compare_debian_versions(f, *earliest) < 0) earliest = &f;
  }
  const std::string* bar = branched ? latest : earliest;
  return bar && compare_debian_versions(upstream, *bar) >= 0 ? *bar : "";
}

const FixCarrier* carried_by(const RuntimeEscape& escape, std::string_view package_version) {
  for (const auto& c : escape.carriers)
    if (upstream_of(c.version) == upstream_of(package_version) &&
        compare_debian_versions(package_version, c.version) >= 0)
      return &c;
  return nullptr;
}

std::string stale_table_note(const EscapeTable& table, long long today) {
  const long long age = today - table.reviewed_day;
  if (age <= kEscapeTableMaxAgeDays) return "";
  return fmt::format("the {} escape table {} was last reviewed {}, {} days ago (more than {})",
                     component_name(table.component), table.source, table.reviewed, age,
                     kEscapeTableMaxAgeDays);
}

std::vector<std::string> stale_escape_tables(const EscapeTables& tables, long long today) {
  std::vector<std::string> out;
  for (const auto& [c, t] : tables.tables)
    if (t)
      if (std::string note = stale_table_note(*t, today); !note.empty()) out.push_back(std::move(note));
  return out;
}

std::optional<long long> day_of_date(std::string_view date) {
  if (date.size() != 10 || date[4] != '-' || date[7] != '-') return std::nullopt;
  auto num = [&](std::size_t at, std::size_t n) {
    long long v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (date[i] < '0' || date[i] > '9') return -1LL;
      v = v * 10 + (date[i] - '0');
    }
    return v;
  };
  const long long y = num(0, 4), m = num(5, 2), d = num(8, 2);
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (y < 1970 || m < 1 || m > 12 || d < 1 || d > kDays[m - 1]) return std::nullopt;
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (m == 2 && d == 29 && !leap) return std::nullopt;
  // Howard Hinnant's days_from_civil.
  const long long yy = m <= 2 ? y - 1 : y;
  const long long era = yy / 400;
  const long long yoe = yy - era * 400;
  const long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

std::optional<RunscRelease> runsc_release_of(std::string_view v) {
  if (v.rfind("release-", 0) == 0)
    v.remove_prefix(8);
  else if (v.rfind("0.0~", 0) == 0)
    v.remove_prefix(4);
  v = v.substr(0, v.find('-'));  // a Debian revision after the upstream part
  // YYYYMMDD.N
  if (v.size() < 10 || v.size() > 20 || v[8] != '.') return std::nullopt;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (i != 8 && (v[i] < '0' || v[i] > '9')) return std::nullopt;
  const std::string date = fmt::format("{}-{}-{}", v.substr(0, 4), v.substr(4, 2), v.substr(6, 2));
  const auto day = day_of_date(date);
  if (!day) return std::nullopt;
  return RunscRelease{std::string(v), date, *day};
}

}  // namespace isoharness::verify
