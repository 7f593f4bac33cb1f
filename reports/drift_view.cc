#include "reports/drift_view.h"

#include "reports/parity_view.h"
#include "reports/text_format.h"

namespace isoharness::reports {

std::vector<std::string> drift_deployments(const nlohmann::json& drift) {
  std::vector<std::string> out;
  const auto sum = drift.is_object() ? drift.value("summary", nlohmann::json::object()) : nlohmann::json();
  const auto d = sum.is_object() ? sum.value("deployments", nlohmann::json::array()) : nlohmann::json();
  if (d.is_array())
    for (const auto& x : d)
      if (x.is_string()) out.push_back(x.get<std::string>());
  return out;
}

std::string series_label(const nlohmann::json& drift, const nlohmann::json& holder) {
  std::string key = holder.contains("key") ? str_or(holder, "key") : str_or(holder, "series");
  if (drift_deployments(drift).size() < 2 || str_or(holder, "deployment").empty()) return key;
  return str_or(holder, "deployment") + " · " + key;
}

std::vector<ChangeRow> change_rows(const nlohmann::json& drift, bool fresh) {
  std::vector<ChangeRow> rows;
  for (const auto& s : drift["series"]) {
    for (const auto& c : s["changes"]) {
      if (c["new"].get<bool>() != fresh) continue;
      const auto& sh = c["shift"];
      ChangeRow row{c["gated"].get<bool>(),
                    series_label(drift, c),
                    str_or(c, "run"),
                    str_or(c, "started"),
                    format_ratio(num_or(c["before"], "median_ratio", 0.0)),
                    format_ratio(num_or(c["after"], "median_ratio", 0.0)),
                    format_ratio(num_or(sh, "estimate", 0.0)),
                    format_ratio(num_or(sh, "low", 0.0)),
                    format_ratio(num_or(sh, "high", 0.0)),
                    format_p(num_or(c, "p_value", 0.0)),
                    str_or(c, "explanation"),
                    {}};
      for (const auto& n : c["notes"]) row.notes.emplace_back(str_or(n, "run"), str_or(n, "text"));
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace isoharness::reports
