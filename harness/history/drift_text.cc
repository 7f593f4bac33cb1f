// drift_to_text: the drift document for a terminal.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/history/drift.h"

namespace isoharness::history {

namespace {

// "on hawk/staging " when the history holds more than one deployment.
std::string where(const nlohmann::json& c, bool several) {
  if (!several || !c.contains("deployment") || !c["deployment"].is_string()) return "";
  return "on " + c["deployment"].get<std::string>() + " ";
}

std::string change_line(const nlohmann::json& c, bool several) {
  const auto& b = c["before"];
  const auto& a = c["after"];
  const auto& s = c["shift"];
  std::string out = fmt::format(
      "  {}{}{} at run {} ({}): ratio {:.3f} -> {:.3f} ({} -> {} runs), shift x{:.3f} [{:.3f}, {:.3f}], p = "
      "{:.3g}\n",
      c["gated"].get<bool>() ? "GATED " : (c["new"].get<bool>() ? "NEW " : ""), where(c, several),
      c["series"].get<std::string>(), c["run"].get<std::string>(), c["started"].get<std::string>(),
      b["median_ratio"].get<double>(), a["median_ratio"].get<double>(), b["runs"].get<int>(),
      a["runs"].get<int>(), s["estimate"].get<double>(), s["low"].get<double>(), s["high"].get<double>(),
      c["p_value"].get<double>());
  out += "      " + c["explanation"].get<std::string>() + "\n";
  for (const auto& n : c["notes"])
    out += "      note on " + n["run"].get<std::string>() + ": " + n["text"].get<std::string>() + "\n";
  return out;
}

}  // namespace

std::string drift_to_text(const nlohmann::json& drift) {
  const auto& sum = drift["summary"];
  const auto& m = drift["method"];
  const auto deployments = sum.value("deployments", nlohmann::json::array());
  const bool several = deployments.size() > 1;
  std::string out =
      fmt::format("drift over {} parity run(s), {} series (E-divisive, significance {}, min segment {})\n",
                  sum["runs"].get<int>(), sum["series"].get<int>(), m["significance"].get<double>(),
                  m["min_segment"].get<int>());
  if (several)
    out +=
        fmt::format("{} deployments, each its own series (a run is compared only with runs of its own): {}\n",
                    deployments.size(), fmt::join(deployments.get<std::vector<std::string>>(), ", "));
  for (bool fresh : {true, false}) {
    std::string block;
    for (const auto& s : drift["series"])
      for (const auto& c : s["changes"])
        if (c["new"].get<bool>() == fresh) block += change_line(c, several);
    if (!block.empty()) out += (fresh ? "new since the last night:\n" : "earlier changes:\n") + block;
  }
  const auto& posture = drift.value("posture", nlohmann::json::object());
  for (const auto& p : posture.value("changes", nlohmann::json::array()))
    out += "  posture: " + p.value("scenario", "") + " " + p.value("item_id", "") + " " +
           p.value("runtime", "") + "/" + p.value("node_class", "") + " " + p.value("control", "") +
           " passed before, fails now\n";
  out +=
      fmt::format("{}: {} change point(s), {} new, {} gated\n",
                  sum["verdict"].get<std::string>() == "changed" ? "CHANGED" : "steady",
                  sum["changes"].get<int>(), sum["new_changes"].get<int>(), sum["gated_changes"].get<int>());
  return out;
}

}  // namespace isoharness::history
