// Posture of N sandboxes through one jumphost: isoharness (one libssh2 connection to the
// jumphost, one session per sandbox, `--parallel` workers, isoprobe uploaded and run)
// against OpenSSH `ssh -J` running the shell equivalents of a few probes (uname, CapEff,
// one egress check) sandbox after sandbox. Both measured in the same run, same sandboxes.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "harness/common/subprocess.h"
#include "harness/runner/live_sandbox.h"
#include "harness/runner/matrix.h"
#include "harness/runner/run_support.h"

using namespace isoharness;
using Clock = std::chrono::steady_clock;

namespace {
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

int main(int argc, char** argv) {
  int max_n = 16;
  std::string src = ISOHARNESS_SOURCE_DIR_BENCH;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--max") == 0) max_n = std::atoi(argv[i + 1]);
  try {
    auto profile = scenario::load_deployment(src + "/scenarios/deployments/local.yaml");
    auto planned = runner::plan_scenarios({src + "/scenarios/standard.yaml"}, profile, false);
    const auto& item = planned.front().plan["items"][0];
    const std::string run_id = runner::random_run_id();
    runner::RunKey key(run_id);
    auto backend = runner::make_backend("local", profile, run_id);
    runner::JobContext ctx;
    ctx.use_key(run_id, key);
    ctx.backend = backend.get();
    ctx.isoprobe_bundle = std::filesystem::path(argv[0]).parent_path().parent_path().string() + "/probes/isoprobe-bundle";

    std::printf("%-4s %14s %14s %8s\n", "N", "isoharness(s)", "ssh -J loop(s)", "ratio");
    for (int n : {1, 8, 16}) {
      if (n > max_n) break;
      std::vector<std::unique_ptr<runner::LiveSandbox>> boxes;
      for (int i = 0; i < n; ++i) {
        runner::Job job{"standard", item, "runc", "non-tier", 1};
        boxes.push_back(std::make_unique<runner::LiveSandbox>(
            ctx, runner::make_request(job, 1, "b" + std::to_string(n) + "x" + std::to_string(i), ctx)));
      }
      // isoharness: 4 workers, session + upload + posture per sandbox.
      auto t = Clock::now();
      std::atomic<int> next{0};
      std::atomic<int> failed{0};
      std::vector<std::thread> workers;
      for (int w = 0; w < 4; ++w)
        workers.emplace_back([&] {
          for (int i = next++; i < n; i = next++) {
            try {
              auto& s = boxes[i]->connect(std::chrono::seconds(45));
              boxes[i]->upload_isoprobe();
              auto r = s.exec({runner::kRemoteProbe, "posture", "--deadline-ms", "8000", "--target",
                               "target-addr=203.0.113.10:80/tcp"},
                              std::chrono::seconds(90), 8 << 20);
              if (!r || r->exit_code != 0) ++failed;
            } catch (const std::exception&) {
              ++failed;
            }
          }
        });
      for (auto& w : workers) w.join();
      double ours = since(t);

      // OpenSSH: the shell equivalents, one sandbox after another.
      std::string dir = "/tmp/isoharness-bench-" + run_id;
      std::filesystem::create_directories(dir);
      std::ofstream kh(dir + "/known_hosts");
      const auto& route0 = boxes[0]->handle().route;
      kh << "[" << route0.jump.host << "]:" << route0.jump.port << " " << route0.jump.host_key << "\n";
      for (auto& b : boxes)
        kh << "[" << b->handle().route.sandbox.host << "]:" << b->handle().route.sandbox.port << " "
           << b->handle().route.sandbox.host_key << "\n";
      kh.close();
      t = Clock::now();
      for (auto& b : boxes) {
        const auto& r = b->handle().route;
        auto res = run_command(
            {"ssh", "-i", key.private_path(), "-o", "BatchMode=yes", "-o", "UserKnownHostsFile=" + dir + "/known_hosts",
             "-o", "StrictHostKeyChecking=yes", "-o", "ConnectTimeout=10", "-J",
             r.jump.user + "@" + r.jump.host + ":" + std::to_string(r.jump.port), "-p", std::to_string(r.sandbox.port),
             r.sandbox.user + "@" + r.sandbox.host, "--",
             "uname -r; grep CapEff /proc/self/status; timeout 3 bash -c 'exec 3<>/dev/tcp/203.0.113.10/80' || echo blocked"},
            RunOptions{.deadline = std::chrono::seconds(60)});
        if (!res || res->exit_code != 0) ++failed;
      }
      double theirs = since(t);
      std::filesystem::remove_all(dir);
      std::printf("%-4d %14.2f %14.2f %8.2f%s\n", n, ours, theirs, ours / theirs,
                  failed ? "  (some sandboxes failed)" : "");
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "run_posture_bench: %s\n", e.what());
    return 3;
  }
  return 0;
}
