// What reading the node's view of a sandbox costs (harness/deploy/local/node_observer.h),
// per sandbox, side by side with the view off. Starts one runc container and one runsc
// sandbox of the same bundle (sleep as uid 1000, read-only root, /usr bound read-only),
// reads the view of each `--runs` times, runtimes interleaved, and prints the median, min
// and max per runtime; with the view off a run reads nothing (0 ms). Needs root, runc and
// runsc; removes both containers and the bundle when done, also on failure.
//   sudo build/bench/node_view_bench [--runs 20]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/common/median.h"
#include "harness/common/subprocess.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/local_backend.h"
#include "harness/deploy/local/node_observer.h"

namespace dl = isoharness::deploy::local;
using Clock = std::chrono::steady_clock;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

json bundle_config(const std::string& rootfs) {
  json caps = json::array({"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"});
  json mounts = json::array(
      {{{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}},
       {{"destination", "/dev"},
        {"type", "tmpfs"},
        {"source", "tmpfs"},
        {"options", {"nosuid", "strictatime", "mode=755", "size=65536k"}}},
       {{"destination", "/sys"},
        {"type", "sysfs"},
        {"source", "sysfs"},
        {"options", {"nosuid", "noexec", "nodev", "ro"}}},
       {{"destination", "/usr"}, {"type", "bind"}, {"source", "/usr"}, {"options", {"rbind", "ro"}}}});
  json ns = json::array(
      {{{"type", "pid"}}, {{"type", "ipc"}}, {{"type", "uts"}}, {{"type", "mount"}}, {{"type", "network"}}});
  return {{"ociVersion", "1.0.2"},
          {"process",
           {{"terminal", false},
            {"user", {{"uid", 1000}, {"gid", 1000}}},
            {"args", {"/usr/bin/sleep", "600"}},
            {"env", {"PATH=/usr/bin:/bin"}},
            {"cwd", "/"},
            {"capabilities", {{"bounding", caps}, {"effective", caps}, {"permitted", caps}}},
            {"noNewPrivileges", true}}},
          {"root", {{"path", rootfs}, {"readonly", true}}},
          {"hostname", "bench"},
          {"mounts", mounts},
          {"linux", {{"namespaces", ns}, {"readonlyPaths", {"/proc/sys"}}, {"maskedPaths", {"/proc/keys"}}}}};
}

bool run(const std::vector<std::string>& argv) {
  isoharness::RunOptions opts;
  opts.deadline = 60s;
  auto r = isoharness::run_command(argv, opts);
  return r && r->ok();
}

struct Stats {
  std::vector<double> ms;
};

void print(const char* name, const Stats& s) {
  auto v = s.ms;
  std::sort(v.begin(), v.end());
  std::printf("%-6s view on : median %7.2f ms  min %7.2f  max %7.2f  (%zu reads)\n", name,
              isoharness::median(v), v.front(), v.back(), v.size());
  std::printf("%-6s view off: median %7.2f ms  (nothing read)\n", name, 0.0);
}

// Reads each container's view `runs` times, runtimes interleaved; prints the figures.
int measure(int runs, const dl::ContainerRef& runc_ref, const dl::ContainerRef& runsc_ref) {
  int status = 0;
  Stats s_runc, s_runsc;
  for (int i = 0; i < runs; ++i) {
    for (const bool gvisor : {false, true}) {
      const auto t0 = Clock::now();
      const auto view = dl::observe_containers({gvisor ? runsc_ref : runc_ref});
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      const auto want =
          gvisor ? isoharness::deploy::NodeRuntime::runsc : isoharness::deploy::NodeRuntime::runc;
      if (view.containers.empty() || view.containers[0].runtime != want) {
        std::fprintf(stderr, "the view did not find the %s container\n", gvisor ? "runsc" : "runc");
        status = 3;
      }
      (gvisor ? s_runsc : s_runc).ms.push_back(ms);
    }
  }
  std::printf("node view per sandbox, %d reads each, runtimes interleaved\n", runs);
  print("runc", s_runc);
  print("runsc", s_runsc);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 20;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::max(1, std::atoi(argv[i + 1]));
  char tmpl[] = "/tmp/ih-nodeview-bench-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  const std::string bundle = dir + "/bundle", rootfs = bundle + "/rootfs";
  namespace fs = std::filesystem;
  for (const char* d : {"usr", "proc", "dev", "sys", "tmp"}) fs::create_directories(rootfs + "/" + d);
  for (const char* l : {"bin", "lib", "lib64", "sbin"})
    fs::create_symlink(std::string("usr/") + l, rootfs + "/" + l);
  std::ofstream(bundle + "/config.json") << bundle_config(rootfs).dump();
  const std::string runc = dl::find_program("runc"), runsc = dl::find_program("runsc");
  const std::string runc_root = dir + "/runc", runsc_root = dir + "/runsc";
  const std::string id_runc = "ih-nvbench-runc", id_runsc = "ih-nvbench-runsc";
  int status = 0;
  // Started as the backend starts them: detached, their stdio a log, reaped by an adopter.
  pid_t adopt_runc = -1, adopt_runsc = -1;
  auto start = [&](const std::vector<std::string>& argv, const char* name, pid_t& adopter) {
    try {
      dl::run_detaching(dl::default_helper_path(), argv, dir + "/" + name + ".log", name, adopter);
      return true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", name, e.what());
      return false;
    }
  };
  const bool up_runc =
      start({runc, "--root", runc_root, "run", "--detach", "--bundle", bundle, id_runc}, "runc", adopt_runc);
  const bool up_runsc =
      start({runsc, "--root", runsc_root, "--network=none", "run", "--detach", "--bundle", bundle, id_runsc},
            "runsc", adopt_runsc);
  if (!up_runc || !up_runsc) {
    std::fprintf(stderr, "could not start the containers (runc %d, runsc %d)\n", up_runc, up_runsc);
    status = 3;
  } else {
    status = measure(runs, {id_runc, "default", runc, runc_root, runsc, runsc_root},
                     {id_runsc, "default", runc, runc_root, runsc, runsc_root});
  }
  run({runc, "--root", runc_root, "delete", "--force", id_runc});
  run({runsc, "--root", runsc_root, "delete", "-force", id_runsc});
  dl::reap_adopter(adopt_runc);
  dl::reap_adopter(adopt_runsc);
  std::error_code ec;
  fs::remove_all(dir, ec);
  return status;
}
