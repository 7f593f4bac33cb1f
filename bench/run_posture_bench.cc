// Posture of N sandboxes through one jumphost: isoharness (one libssh2 connection to the
// jumphost, one session per sandbox, 4 workers, isoprobe uploaded and run with three
// egress targets) against OpenSSH `ssh -J` (pinned keys on both hops) running shell
// equivalents of the same probes (uname, /proc/self/status, id, mountinfo, kallsyms,
// sysrq, unshare -U, the same three egress targets at once with a 3 s limit) sandbox
// after sandbox. Both in the same run on the same sandboxes. isoharness's time is split
// into upload (the 7 MB bundle, once per sandbox) and the rest. Any failure is printed.
//
//   run_posture_bench [--max N (default 16)]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "harness/common/subprocess.h"
#include "harness/deploy/factory/backend_factory.h"
#include "harness/deploy/local/ssh_client_files.h"
#include "harness/runner/live_sandbox.h"
#include "harness/runner/matrix.h"
#include "harness/runner/run_support.h"

using namespace isoharness;
namespace dl = isoharness::deploy::local;
using Clock = std::chrono::steady_clock;

namespace {
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
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
    auto backend = deploy::make_backend("local", profile, {run_id, "", false, nullptr});
    runner::JobContext ctx;
    ctx.use_key(run_id, key);
    ctx.backend = backend.get();
    ctx.isoprobe_bundle =
        std::filesystem::path(argv[0]).parent_path().parent_path().string() + "/probes/isoprobe-bundle";

    std::printf("%-4s %14s %14s %14s %8s\n", "N", "isoharness(s)", "upload/box(s)", "ssh -J loop(s)",
                "ratio");
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
      std::mutex mu;
      std::vector<std::string> problems;
      double upload_sum = 0;
      auto note = [&](const std::string& what) {
        std::lock_guard lock(mu);
        problems.push_back(what);
      };
      std::vector<std::thread> workers;
      for (int w = 0; w < 4; ++w)
        workers.emplace_back([&] {
          for (int i = next++; i < n; i = next++) {
            try {
              auto& s = boxes[i]->connect(std::chrono::seconds(45));
              boxes[i]->upload_isoprobe();
              {
                std::lock_guard lock(mu);
                upload_sum += boxes[i]->timings().value("upload_s", 0.0);
              }
              auto r =
                  s.exec({runner::kRemoteProbe, "posture", "--deadline-ms", "8000", "--egress-deadline-ms",
                          "3000", "--target", "target=203.0.113.10:80/tcp", "--target",
                          "blocked=203.0.113.20:80/tcp", "--target", "metadata=169.254.169.254:80/tcp"},
                         std::chrono::seconds(90), 8 << 20);
              if (!r)
                note("isoharness sandbox " + std::to_string(i) + ": " + r.error().message);
              else if (r->exit_code != 0)
                note("isoharness sandbox " + std::to_string(i) + ": isoprobe exit " +
                     std::to_string(r->exit_code) + ": " + r->err.substr(0, 200));
            } catch (const std::exception& e) {
              note("isoharness sandbox " + std::to_string(i) + ": " + e.what());
            }
          }
        });
      for (auto& w : workers) w.join();
      double ours = since(t);

      // OpenSSH: the shell equivalents, one sandbox after another, host keys pinned.
      std::string dir = "/tmp/isoharness-bench-" + run_id;
      std::filesystem::create_directories(dir);
      const std::string script =
          "uname -a; grep -E '^(Cap|NoNewPrivs|Seccomp)' /proc/self/status; id; wc -l < "
          "/proc/self/mountinfo; "
          "head -c 4096 /proc/kallsyms | head -3; test -w /proc/sysrq-trigger && echo sysrq-writable; "
          "unshare -U true 2>/dev/null && echo userns; "
          "for hp in 203.0.113.10/80 203.0.113.20/80 169.254.169.254/80; do "
          "( timeout 3 bash -c \"exec 3<>/dev/tcp/$hp\" 2>/dev/null && echo $hp open || echo $hp closed ) & "
          "done; wait";
      t = Clock::now();
      for (std::size_t i = 0; i < boxes.size(); ++i) {
        const auto& r = boxes[i]->handle().route;
        const std::string kh = dir + "/known_hosts-" + std::to_string(i),
                          cfg = dir + "/config-" + std::to_string(i);
        std::ofstream(kh) << dl::known_hosts_lines(r);
        std::ofstream(cfg) << dl::ssh_client_config(kh, key.private_path());
        RunOptions o;
        o.deadline = std::chrono::seconds(60);
        auto res = run_command(dl::ssh_argv(r, cfg, {"bash", "-c", script}), o);
        if (!res)
          note("ssh -J sandbox " + std::to_string(i) + ": " + res.error().message);
        else if (res->exit_code != 0)
          note("ssh -J sandbox " + std::to_string(i) + ": " + res->describe() + ": " +
               res->err.substr(0, 200));
      }
      double theirs = since(t);
      std::filesystem::remove_all(dir);
      std::printf("%-4d %14.2f %14.2f %14.2f %8.2f\n", n, ours, upload_sum / n, theirs, ours / theirs);
      for (const auto& p : problems) std::printf("     failed: %s\n", p.c_str());
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "run_posture_bench: %s\n", e.what());
    return 3;
  }
  return 0;
}
