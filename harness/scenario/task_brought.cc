// What a task brings with its own sandbox that the platform passes through as written:
// references the runner fills from its own environment (envsubst over the compose text),
// extra Kubernetes objects, Cilium entities beyond world, added capabilities. Each is kept
// with its place so the policy can refuse or flag it (docs/CONTRACTS.md §8).
//
// The environment scan follows envsubst as the platform's runner applies it to a compose
// file before converting it: `$$` is a literal dollar (hidden first, so `$${A}` names
// nothing), then `${NAME}`, `${NAME:-default}`, `${NAME-default}` and `$NAME` with NAME
// `[A-Za-z_][A-Za-z0-9_]*` are substituted. A `${` that does not close, or a `$` before
// anything else, stays as it is. YAML comments (a `#` at the start of a line or after a
// blank, outside quotes) are skipped: what they hold never reaches the converter.
#include "harness/scenario/sandbox_definition.h"
#include "harness/scenario/sandbox_reading.h"

namespace isoharness::scenario {

std::string_view brought_kind_name(BroughtKind kind) {
  switch (kind) {
    case BroughtKind::environment_reference:
      return "environment_reference";
    case BroughtKind::additional_resources:
      return "additional_resources";
    case BroughtKind::entity:
      return "entity";
    case BroughtKind::capability:
      return "capability";
  }
  return "?";
}

namespace {

bool env_name_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool env_name_char(char c) {
  return env_name_start(c) || (c >= '0' && c <= '9');
}

// The length of the name starting at line[i] (0 when none).
std::size_t env_name_length(std::string_view line, std::size_t i) {
  if (i >= line.size() || !env_name_start(line[i])) return 0;
  std::size_t n = 1;
  while (i + n < line.size() && env_name_char(line[i + n])) ++n;
  return n;
}

// The name a `$` at line[i] refers to, and how many characters the reference spans.
std::pair<std::string, std::size_t> env_reference_at(std::string_view line, std::size_t i) {
  if (i + 1 < line.size() && line[i + 1] == '{') {
    const std::size_t n = env_name_length(line, i + 2);
    if (n == 0) return {"", 1};
    const std::size_t after = i + 2 + n;
    const std::size_t close = line.find('}', after);
    const bool form_ok =
        after < line.size() && (line[after] == '}' || line.substr(after, 2) == ":-" || line[after] == '-');
    if (!form_ok || close == std::string_view::npos) return {"", 1};
    return {std::string(line.substr(i + 2, n)), close - i + 1};
  }
  const std::size_t n = env_name_length(line, i + 1);
  return {n ? std::string(line.substr(i + 1, n)) : std::string(), n + 1};
}

void scan_env_line(std::string_view line, int line_no, const std::string& file,
                   std::vector<TaskBrought>& out) {
  char quote = 0;
  for (std::size_t i = 0; i < line.size();) {
    const char c = line[i];
    if (quote == 0 && c == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) return;
    if (c == '"' || c == '\'') quote = quote == 0 ? c : (quote == c ? 0 : quote);
    if (c != '$') {
      ++i;
      continue;
    }
    if (i + 1 < line.size() && line[i + 1] == '$') {  // `$$`: a literal dollar
      i += 2;
      continue;
    }
    auto [name, span] = env_reference_at(line, i);
    if (!name.empty()) {
      Diagnostic d{file, line_no, static_cast<int>(i) + 1, "", ""};
      d.message = "'" + std::string(line.substr(i, span)) + "' is filled from the runner's environment";
      out.push_back(TaskBrought{BroughtKind::environment_reference, name, std::move(d)});
    }
    i += span;
  }
}

}  // namespace

std::vector<TaskBrought> environment_references(std::string_view text, const std::string& file) {
  std::vector<TaskBrought> out;
  int line_no = 1;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    scan_env_line(text.substr(start, end - start), line_no, file, out);
    if (end == text.size()) break;
    start = end + 1;
    ++line_no;
  }
  return out;
}

void note_brought(const SandboxProblems& at, const std::string& pointer, BroughtKind kind, std::string what,
                  std::string message, SandboxDefinition& d) {
  d.brought.push_back(
      TaskBrought{kind, std::move(what), at.source.diagnostic(pointer, "", std::move(message))});
}

void note_entities(const nlohmann::json& list, const std::string& pointer, const SandboxProblems& at,
                   SandboxDefinition& d) {
  if (!list.is_array()) return;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string() || list[i] == "world") continue;
    const std::string e = list[i].get<std::string>();
    note_brought(at, pointer_join(pointer, i), BroughtKind::entity, e,
                 "entity '" + e + "' opens egress beyond the internet (Cilium's " + e + ")", d);
  }
}

void note_service_privileges(const nlohmann::json& chart, const std::string& pointer,
                             const SandboxProblems& at, SandboxDefinition& d) {
  if (!chart.contains("securityContext") || !chart["securityContext"].is_object()) return;
  const auto& sc = chart["securityContext"];
  const std::string scp = pointer_join(pointer, "securityContext");
  if (sc.contains("privileged") && sc["privileged"] == true)
    note_brought(at, pointer_join(scp, "privileged"), BroughtKind::capability, "privileged",
                 "privileged: true (every capability, every device)", d);
  if (!sc.contains("capabilities") || !sc["capabilities"].is_object()) return;
  const auto& add = sc["capabilities"].value("add", nlohmann::json::array());
  if (!add.is_array()) return;
  for (std::size_t i = 0; i < add.size(); ++i) {
    const std::string cap = add[i].is_string() ? add[i].get<std::string>() : add[i].dump();
    note_brought(at, pointer_join(pointer_join(pointer_join(scp, "capabilities"), "add"), i),
                 BroughtKind::capability, cap, "capabilities.add " + cap, d);
  }
}

nlohmann::json converted_values(const SandboxDefinition& d) {
  nlohmann::json v = nlohmann::json::object();
  for (const auto& s : d.services)
    if (!s.from_chart_values) v["services"][s.name] = s.chart;
  if (!d.volumes.empty()) v["volumes"] = d.volumes;
  if (!d.allow_domains.empty()) v["allowDomains"] = d.allow_domains;
  if (!d.allow_entities.empty()) v["allowEntities"] = d.allow_entities;
  return v;
}

}  // namespace isoharness::scenario
