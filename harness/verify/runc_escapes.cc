#include "harness/verify/runc_escapes.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "harness/common/install_paths.h"
#include "harness/common/text.h"
#include "harness/verify/debian_version.h"

namespace isoharness::verify {
namespace {

using common::trim;

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

// One table line into `out`; "" or why it is not one.
std::string parse_row(std::string_view line, RuncEscape& out) {
  const auto fields = split(line, '|');
  if (fields.size() != 4) return "needs four fields separated by '|'";
  if (fields[0].rfind("CVE-", 0) != 0 || fields[0].size() < 13) return "the first field is not a CVE name";
  out.cve = fields[0];
  out.what = fields[1];
  for (auto v : split(fields[2], ',')) {
    if (!debian_version_shape(v) || branch_of(v).empty())
      return "fixed version '" + std::string(v) + "' is not a version";
    out.fixed.emplace_back(v);
  }
  if (fields[3].empty()) return "";
  for (auto c : split(fields[3], ',')) {
    const auto eq = c.find('=');
    if (eq == std::string_view::npos || eq == 0 || !debian_version_shape(c.substr(eq + 1)))
      return "package '" + std::string(c) + "' is not distribution/suite=version";
    out.carriers.push_back({std::string(c.substr(0, eq)), std::string(c.substr(eq + 1))});
  }
  return "";
}

}  // namespace

Expected<RuncEscapeTable> parse_runc_escapes(std::string_view text) {
  RuncEscapeTable table;
  std::string problems;
  std::istringstream in{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (trim(line).empty() || trim(line).front() == '#') continue;
    RuncEscape row;
    const std::string why = parse_row(line, row);
    if (why.empty())
      table.escapes.push_back(std::move(row));
    else
      problems += fmt::format("{}line {}: {}", problems.empty() ? "" : "; ", number, why);
  }
  if (!problems.empty()) return make_error("the runc escape table is malformed: " + problems);
  if (table.escapes.empty()) return make_error("the runc escape table lists no escape");
  return table;
}

const Expected<RuncEscapeTable>& shipped_runc_escapes() {
  static const Expected<RuncEscapeTable> table = []() -> Expected<RuncEscapeTable> {
    const ResolvedPath where = resolve_path(kRuncEscapes);
    if (!where.found()) return make_error("the runc escape table is " + where.describe());
    std::ifstream in(where.path);
    std::ostringstream text;
    text << in.rdbuf();
    auto parsed = parse_runc_escapes(text.str());
    if (parsed) parsed->source = where.path;
    return parsed;
  }();
  return table;
}

std::string runc_version_as_debian(std::string_view v) {
  std::string out(v);
  for (auto& c : out)
    if (c == '-') c = '~';
  return out;
}

std::string fixed_by(const RuncEscape& escape, std::string_view upstream) {
  const std::string branch = branch_of(upstream);
  const std::string* latest = nullptr;
  for (const auto& f : escape.fixed) {
    if (!branch.empty() && branch_of(f) == branch) return compare_debian_versions(upstream, f) >= 0 ? f : "";
    if (!latest || compare_debian_versions(f, *latest) > 0) latest = &f;
  }
  return latest && compare_debian_versions(upstream, *latest) >= 0 ? *latest : "";
}

const FixCarrier* carried_by(const RuncEscape& escape, std::string_view package_version) {
  for (const auto& c : escape.carriers)
    if (upstream_of(c.version) == upstream_of(package_version) &&
        compare_debian_versions(package_version, c.version) >= 0)
      return &c;
  return nullptr;
}

}  // namespace isoharness::verify
