// Full posture time (no egress targets) of the isoprobe bundle on the host, under runc
// and under runsc --platform=ptrace, interleaved (host, runc, runsc, host, ...), median
// of N runs each. Two figures per place: the posture's own elapsed_ms (what the issue's
// targets are about) and the wall time including container start and teardown.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/common/median.h"
#include "tests/system/probe_oci.h"

using namespace isoharness;
using namespace isoharness::probe_test;

namespace {

bool record(const RunResult& r, double wall, std::vector<double>& posture, std::vector<double>& walls,
            const char* where) {
  if (!r.ok()) {
    std::fprintf(stderr, "%s: %s\n%s\n", where, r.describe().c_str(), r.err.substr(0, 1000).c_str());
    return false;
  }
  auto doc = nlohmann::json::parse(r.out, nullptr, false);
  if (doc.is_discarded() || !doc.contains("context")) {
    std::fprintf(stderr, "%s: output is not a posture document\n", where);
    return false;
  }
  posture.push_back(doc["context"]["elapsed_ms"].get<double>());
  walls.push_back(wall);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = std::max(1, std::min(50, std::atoi(argv[++i])));
  }
  if (::geteuid() != 0) {
    std::fprintf(stderr, "probe_posture_bench: must run as root (runc, runsc)\n");
    return 2;
  }
  std::string bundle_dir = std::string(ISOHARNESS_BINARY_DIR) + "/probes/isoprobe-bundle";
  ProbeBundle bundle(bundle_dir);
  ContainerSpec strict;
  const std::vector<std::string> args = {"posture", "--compact"};
  std::map<std::string, std::vector<double>> posture, wall;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    RunOptions o;
    o.deadline = std::chrono::seconds(30);
    auto host = run_command({bundle_dir + "/isoprobe", "posture", "--compact"}, o);
    double host_wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!host || !record(*host, host_wall, posture["host"], wall["host"], "host")) return 3;
    auto runc = bundle.run(Runtime::runc, strict, args, std::chrono::seconds(60));
    if (!runc || !record(runc->result, runc->wall_ms, posture["runc"], wall["runc"], "runc")) return 3;
    auto runsc = bundle.run(Runtime::runsc, strict, args, std::chrono::seconds(120));
    if (!runsc || !record(runsc->result, runsc->wall_ms, posture["runsc"], wall["runsc"], "runsc-ptrace"))
      return 3;
  }
  std::printf("isoprobe posture, no egress: median of %d runs (interleaved)\n", runs);
  std::printf("%-14s %14s %14s %10s\n", "where", "posture (ms)", "wall (ms)", "target");
  const std::map<std::string, std::string> targets = {
      {"host", "-"}, {"runc", "300 ms"}, {"runsc", "1500 ms"}};
  for (const char* where : {"host", "runc", "runsc"}) {
    std::printf("%-14s %14.1f %14.1f %10s\n", std::strcmp(where, "runsc") == 0 ? "runsc-ptrace" : where,
                median(posture[where]), median(wall[where]), targets.at(where).c_str());
  }
  double h = median(posture["host"]);
  if (h > 0) {
    std::printf("ratio posture runc/host %.2f, runsc/host %.2f, runsc/runc %.2f\n",
                median(posture["runc"]) / h, median(posture["runsc"]) / h,
                median(posture["runsc"]) / std::max(1.0, median(posture["runc"])));
  }
  bool within = median(posture["runc"]) <= 300 && median(posture["runsc"]) <= 1500;
  std::printf("targets %s\n", within ? "met" : "NOT met");
  return 0;
}
