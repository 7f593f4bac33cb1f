// render_benchmark_cells: each measured cell's samples in Google Benchmark's JSON format,
// so that `compare.py benchmarks a.json b.json` (benchmark's tools/) can read two cells.
// Every sample becomes one "iteration" run (repetition i of n) with its per-operation time
// as real_time; cpu_time carries the same value because the harness measures wall time.
#include <fmt/format.h>

#include "reports/document_shape.h"
#include "reports/parity_view.h"
#include "reports/reports.h"
#include "reports/text_format.h"

namespace isoharness::reports {

std::map<std::string, nlohmann::json> render_benchmark_cells(const nlohmann::json& parity,
                                                             const nlohmann::json& context) {
  std::map<std::string, nlohmann::json> out;
  for (const auto& s : parity_sections(parity)) {
    const std::string scenario = str_or(s, "scenario");
    for (const auto& [cell, workloads] : s["samples"].items()) {
      nlohmann::json ctx = {
          {"date", str_or(context, "started")},
          {"host_name", str_or(context, "host")},
          {"executable", "isoharness parity"},
          {"num_cpus", context.is_object() && context.contains("cpus") && context["cpus"].is_number()
                           ? context["cpus"]
                           : nlohmann::json(0)},
          {"mhz_per_cpu", 0},
          {"cpu_scaling_enabled", false},
          {"caches", nlohmann::json::array()},
          {"load_avg", nlohmann::json::array()},
          {"library_build_type", "release"},
          {"isoharness_scenario", scenario},
          {"isoharness_cell", cell},
          {"isoharness_baseline", s["baseline"]},
          {"isoharness_note",
           "one entry per parity round; real_time is the per-operation wall time, cpu_time repeats it"},
      };
      nlohmann::json benchmarks = nlohmann::json::array();
      int family = 0;
      for (const auto& [workload, times] : workloads.items()) {
        const auto n = static_cast<int>(times.size());
        for (int i = 0; i < n; ++i) {
          const double ns = times[static_cast<std::size_t>(i)].get<double>() * 1e9;
          benchmarks.push_back({{"name", workload},
                                {"family_index", family},
                                {"per_family_instance_index", 0},
                                {"run_name", workload},
                                {"run_type", "iteration"},
                                {"repetitions", n},
                                {"repetition_index", i},
                                {"threads", 1},
                                {"iterations", 1},
                                {"real_time", ns},
                                {"cpu_time", ns},
                                {"time_unit", "ns"}});
        }
        ++family;
      }
      out[cell_file_stem(scenario, cell) + ".json"] = {{"context", ctx}, {"benchmarks", benchmarks}};
    }
  }
  return out;
}

}  // namespace isoharness::reports
