// Shared by the selftest renderers (internal to reports/): the section, checked, and the
// words every format uses for a cell.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace isoharness::reports {

// result["selftest"], after checking the keys the renderers read; UserError listing every
// problem otherwise.
const nlohmann::json& selftest_section(const nlohmann::json& result);

// "caught", "missed", "n/a", "error" (as in the section).
std::string cell_status(const nlohmann::json& cell);
// What a reader needs after the status: the catching controls, or the reason.
std::string cell_detail(const nlohmann::json& cell);
// "a, b, c"
std::string join_list(const nlohmann::json& list);
// "30/30 applicable weakenings caught (runc 16/16, gvisor 14/14)"
std::string caught_line(const nlohmann::json& summary);

}  // namespace isoharness::reports
