// Every workload with default settings (`isoprobe bench --benchmark_format=json`), on the
// host, directly under runc and under runsc-ptrace (--network=none), one after the other:
// prints the per-iteration time of each workload side by side, the runsc/runc ratio, and
// how long each whole `isoprobe bench` took (target: about 10 s or less under runc).
//
//   workloads_side_by_side [--min-time S]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/common/subprocess.h"
#include "tests/system/workloads_container.h"

using namespace isoharness;

int main(int argc, char** argv) {
  std::vector<std::string> extra;
  if (argc == 3 && std::string(argv[1]) == "--min-time") extra = {"--min-time", argv[2]};
  if (::geteuid() != 0) {
    std::fprintf(stderr, "workloads_side_by_side: needs root (runc, runsc)\n");
    return 3;
  }
  const std::string isoprobe = workloads_test::isoprobe_path(ISOHARNESS_BINARY_DIR);
  if (isoprobe.empty()) {
    std::fprintf(stderr, "isoprobe is not built under %s/probes\n", ISOHARNESS_BINARY_DIR);
    return 3;
  }
  namespace fs = std::filesystem;
  workloads_test::OciBundle bundle({{fs::path(isoprobe).parent_path().string(), "/opt/isoprobe"}});
  std::vector<std::string> args = {"/opt/isoprobe/isoprobe", "bench", "--benchmark_format=json"};
  args.insert(args.end(), extra.begin(), extra.end());

  std::vector<std::string> order;                                  // workload names, as reported
  std::map<std::string, std::map<std::string, std::string>> cell;  // workload -> where -> text
  std::map<std::string, std::map<std::string, double>> ns;
  std::map<std::string, double> wall;
  for (const char* where : {"host", "runc", "runsc"}) {
    auto start = std::chrono::steady_clock::now();
    Expected<RunResult> r = [&]() -> Expected<RunResult> {
      if (std::string(where) == "host") {
        auto host_args = args;
        host_args[0] = isoprobe;
        return run_command(host_args,
                           RunOptions{.deadline = std::chrono::seconds(300), .max_output = 4 << 20});
      }
      return bundle.run(where, args, std::chrono::seconds(300));
    }();
    wall[where] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!r || !r->ok()) {
      std::fprintf(stderr, "%s: isoprobe bench failed: %s\n%s\n", where,
                   r ? r->describe().c_str() : r.error().message.c_str(), r ? r->err.c_str() : "");
      continue;
    }
    auto doc = nlohmann::json::parse(r->out, nullptr, false);
    if (doc.is_discarded()) continue;
    for (const auto& b : doc.value("benchmarks", nlohmann::json::array())) {
      std::string name = b.value("name", "");
      name = name.substr(0, name.find('/'));
      if (cell.find(name) == cell.end()) order.push_back(name);
      if (b.value("error_occurred", false)) {
        cell[name][where] = b.value("error_message", "error");
      } else {
        double t = b.value("real_time", 0.0);
        ns[name][where] = t;
        char text[64];
        if (t >= 1e6)
          std::snprintf(text, sizeof text, "%.2f ms", t / 1e6);
        else if (t >= 1e3)
          std::snprintf(text, sizeof text, "%.2f us", t / 1e3);
        else
          std::snprintf(text, sizeof text, "%.1f ns", t);
        cell[name][where] = text;
      }
    }
  }
  std::printf("%-20s %14s %14s %14s %12s\n", "workload", "host", "runc", "runsc", "runsc/runc");
  for (const auto& name : order) {
    double a = ns[name]["runc"], b = ns[name]["runsc"];
    std::string ratio = (a > 0 && b > 0) ? std::to_string(b / a).substr(0, 6) + "x" : "-";
    std::printf("%-20s %14s %14s %14s %12s\n", name.c_str(), cell[name]["host"].c_str(),
                cell[name]["runc"].c_str(), cell[name]["runsc"].c_str(), ratio.c_str());
  }
  std::printf(
      "\nwhole `isoprobe bench` (wall, incl. container start): host %.1f s, runc %.1f s, runsc %.1f s\n",
      wall["host"], wall["runc"], wall["runsc"]);
  return 0;
}
