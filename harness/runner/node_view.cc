#include "harness/runner/node_view.h"

#include <array>
#include <chrono>
#include <optional>
#include <regex>

namespace isoharness::runner {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kMaxValue = 200;
constexpr std::size_t kMaxCpuinfo = std::size_t{256} * 1024;

// Without surrounding blanks (spaces, tabs, line ends), then printable ASCII only (other
// bytes as '?'), at most kMaxValue characters.
std::string clean(std::string_view text) {
  constexpr std::string_view kBlank = " \t\r\n";
  const auto first = text.find_first_not_of(kBlank);
  if (first == std::string_view::npos) return "";
  text = text.substr(first, text.find_last_not_of(kBlank) - first + 1);
  std::string out;
  for (char c : text) {
    if (out.size() >= kMaxValue) break;
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return out;
}

// The value of the first "key<spaces/tabs>: value" line, or nullopt.
std::optional<std::string> field(std::string_view text, std::string_view key) {
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.substr(0, key.size()) != key) continue;
    const auto colon = line.find(':', key.size());
    if (colon == std::string_view::npos ||
        line.substr(key.size(), colon - key.size()).find_first_not_of(" \t") != std::string_view::npos)
      continue;
    return clean(line.substr(colon + 1));
  }
  return std::nullopt;
}

nlohmann::json or_null(const std::optional<std::string>& v) {
  return v && !v->empty() ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

long count_processors(std::string_view cpuinfo) {
  long n = 0;
  for (std::size_t at = 0; at < cpuinfo.size();) {
    std::size_t end = cpuinfo.find('\n', at);
    if (end == std::string_view::npos) end = cpuinfo.size();
    const std::string_view line = cpuinfo.substr(at, end - at);
    if (line.substr(0, 9) == "processor" && line.find(':') != std::string_view::npos) ++n;
    at = end + 1;
  }
  return n;
}

}  // namespace

nlohmann::json parse_node_view(const NodeViewText& text) {
  static const std::regex boot_re("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  static const std::regex cpus_re("[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*");
  nlohmann::json out;
  auto model = field(text.cpuinfo, "model name");
  if (!model) model = field(text.cpuinfo, "Model");  // arm64 names the machine here
  out["cpu_model"] = or_null(model);
  const long listed = count_processors(text.cpuinfo);
  out["cpus_listed"] = listed > 0 ? nlohmann::json(listed) : nlohmann::json(nullptr);
  if (text.cpuinfo_cut && listed > 0) out["cpus_listed_at_least"] = true;
  const auto allowed = field(text.status, "Cpus_allowed_list");
  out["cpus_allowed"] = allowed && std::regex_match(*allowed, cpus_re) ? nlohmann::json(*allowed) : nullptr;
  const std::string boot = clean(text.boot_id);
  out["boot_id"] = std::regex_match(boot, boot_re) ? nlohmann::json(boot) : nullptr;
  const std::string version = clean(text.version.substr(0, text.version.find('\n')));
  out["kernel"] = version.empty() ? nlohmann::json(nullptr) : nlohmann::json(version);
  return out;
}

nlohmann::json read_node_view(SandboxChannel& session) {
  NodeViewText text;
  nlohmann::json unreadable = nlohmann::json::array();
  struct File {
    const char* path;
    std::string* into;
    std::size_t cap;
  };
  const std::array<File, 4> files{{{"/proc/cpuinfo", &text.cpuinfo, kMaxCpuinfo},
                                   {"/proc/self/status", &text.status, std::size_t{16} * 1024},
                                   {"/proc/sys/kernel/random/boot_id", &text.boot_id, 256},
                                   {"/proc/version", &text.version, 1024}}};
  for (const auto& f : files) {
    auto r = session.exec({"cat", f.path}, 10s, f.cap);
    if (!r || r->timed_out || (r->exit_code != 0 && r->out.empty())) {
      unreadable.push_back(f.path);
      continue;
    }
    *f.into = r->out;
    if (f.into == &text.cpuinfo) text.cpuinfo_cut = r->out_truncated;
  }
  nlohmann::json out = parse_node_view(text);
  if (!unreadable.empty()) out["unreadable"] = unreadable;
  return out;
}

}  // namespace isoharness::runner
