// Posture of N sandboxes through one jumphost, measured three ways in the same run on the
// same sandboxes:
//   isoharness   one libssh2 connection to the jumphost, one session per sandbox, the
//                run's fan-out (--parallel, default the run's), the posture agent the run
//                uploads (its size checked, its SHA-256 reported by the agent and compared), isoprobe posture
//                with three egress targets
//   all at once  OpenSSH `ssh -J` (pinned keys on both hops) running shell equivalents of
//                the same probes (uname, /proc/self/status, id, mountinfo, kallsyms, sysrq,
//                unshare -U, the same three targets at once), every sandbox at the same
//                time: what a user writes with `&` or `xargs -P`
//   one by one   the same, sandbox after sandbox (only with --sequential: it is slow)
// Both sides give blocked targets the deployment profile's egress_deadline_ms. Sandboxes
// are deployed before and destroyed after the timed parts. isoharness's time is split into
// mean connect, upload and posture per sandbox. Any failure is printed, and counted for
// `ssh -J all`: every ssh there is two logins (jumphost, then sandbox), and when too many
// start at once the jumphost's sshd cannot answer them all within the client's connect
// timeout ("timed out during banner exchange"); such a time is not a success. Below each
// row: how busy each CPU was during isoharness's part (the local profile's tier class pins
// every tier sandbox to one CPU).
//
//   run_posture_bench [--max N (default 32)] [--parallel P] [--node-class C (default tier)]
//                     [--sequential]
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/common/subprocess.h"
#include "harness/deploy/factory/backend_factory.h"
#include "harness/deploy/local/ssh_client_files.h"
#include "harness/runner/fanout.h"
#include "harness/runner/journal.h"
#include "harness/runner/jump_pool.h"
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

struct Options {
  int max_n = 32;
  int parallel = runner::kDefaultParallel;
  std::string node_class = "tier";
  bool sequential = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    if (a == "--max" && has_value)
      o.max_n = std::atoi(argv[++i]);
    else if (a == "--parallel" && has_value)
      o.parallel = std::atoi(argv[++i]);
    else if (a == "--node-class" && has_value)
      o.node_class = argv[++i];
    else if (a == "--sequential")
      o.sequential = true;
    else
      throw std::runtime_error("unknown argument " + a);
  }
  return o;
}

class Problems {
 public:
  void note(const std::string& what) {
    std::lock_guard lock(mu_);
    list_.push_back(what);
  }
  void print_and_clear() {
    for (const auto& p : list_) std::printf("     failed: %s\n", p.c_str());
    list_.clear();
  }

 private:
  std::mutex mu_;
  std::vector<std::string> list_;
};

// Per CPU: ticks busy (user, nice, system, irq, softirq) and ticks in all, from /proc/stat.
std::vector<std::pair<long long, long long>> cpu_ticks() {
  std::vector<std::pair<long long, long long>> out;
  std::ifstream in("/proc/stat");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream fields(line.substr(line.find(' ')));
    std::array<long long, 8> v{};
    for (auto& x : v) fields >> x;
    out.emplace_back(v[0] + v[1] + v[2] + v[5] + v[6], v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7]);
  }
  return out;
}

// "cpu0 40%, cpu1 98%": how busy each CPU was between two cpu_ticks().
std::string cpu_busy(const std::vector<std::pair<long long, long long>>& before,
                     const std::vector<std::pair<long long, long long>>& after) {
  std::string out;
  for (std::size_t i = 0; i < before.size() && i < after.size(); ++i) {
    const long long all = after[i].second - before[i].second;
    const long long busy = after[i].first - before[i].first;
    out += (out.empty() ? "cpu" : ", cpu") + std::to_string(i) + " " +
           std::to_string(all > 0 ? 100 * busy / all : 0) + "%";
  }
  return out;
}

struct OursTimes {
  double wall = 0, connect = 0, upload = 0, posture = 0;  // per-sandbox parts are means
};

// isoharness: connect, upload the run's agent, posture; `parallel` sandboxes at once.
OursTimes time_isoharness(std::vector<std::unique_ptr<runner::LiveSandbox>>& boxes, int parallel,
                          int egress_ms, Problems& problems) {
  std::mutex mu;
  OursTimes sums;
  const std::string deadline = std::to_string(egress_ms);
  auto t = Clock::now();
  runner::for_each_parallel(boxes.size(), parallel, [&](std::size_t i) {
    try {
      auto& box = *boxes[i];
      auto& s = box.connect(std::chrono::seconds(45));
      box.upload_isoprobe(transport::UploadCheck::size);
      auto tp = Clock::now();
      auto r =
          s.exec({runner::kRemoteProbe, "posture", "--deadline-ms", "30000", "--egress-deadline-ms", deadline,
                  "--target", "target=203.0.113.10:80/tcp", "--target", "blocked=203.0.113.20:80/tcp",
                  "--target", "metadata=169.254.169.254:80/tcp", "--verify-file", runner::kRemoteProbe},
                 std::chrono::seconds(90), 8 << 20);
      double posture = since(tp);
      {
        std::lock_guard lock(mu);
        sums.connect += box.timings().value("ssh_ready_s", 0.0);
        sums.upload += box.timings().value("upload_s", 0.0);
        sums.posture += posture;
      }
      if (!r)
        problems.note("isoharness sandbox " + std::to_string(i) + ": " + r.error().message);
      else if (r->exit_code != 0)
        problems.note("isoharness sandbox " + std::to_string(i) + ": isoprobe exit " +
                      std::to_string(r->exit_code) + ": " + r->err.substr(0, 200));
    } catch (const std::exception& e) {
      problems.note("isoharness sandbox " + std::to_string(i) + ": " + e.what());
    }
  });
  sums.wall = since(t);
  const double n = static_cast<double>(boxes.size());
  return {sums.wall, sums.connect / n, sums.upload / n, sums.posture / n};
}

std::string shell_script(int egress_ms) {
  char limit[32];
  std::snprintf(limit, sizeof limit, "%.3f", egress_ms / 1000.0);
  return "uname -a; grep -E '^(Cap|NoNewPrivs|Seccomp)' /proc/self/status; id; wc -l < /proc/self/mountinfo; "
         "head -c 4096 /proc/kallsyms | head -3; test -w /proc/sysrq-trigger && echo sysrq-writable; "
         "unshare -U true 2>/dev/null && echo userns; "
         "for hp in 203.0.113.10/80 203.0.113.20/80 169.254.169.254/80; do "
         "( timeout " +
         std::string(limit) +
         " bash -c \"exec 3<>/dev/tcp/$hp\" 2>/dev/null && echo $hp open || echo $hp closed ) & "
         "done; wait";
}

struct SshTimes {
  double wall = 0;
  int failed = 0;  // sandboxes whose ssh -J did not finish with exit 0
};

// OpenSSH: the shell equivalents through `ssh -J`, all at once or one after another.
SshTimes time_ssh(const std::vector<std::vector<std::string>>& argvs, bool all_at_once, Problems& problems) {
  std::atomic<int> failed{0};
  auto one = [&](std::size_t i) {
    RunOptions o;
    o.deadline = std::chrono::seconds(60);
    auto res = run_command(argvs[i], o);
    if (!res || res->exit_code != 0) ++failed;
    if (!res)
      problems.note("ssh -J sandbox " + std::to_string(i) + ": " + res.error().message);
    else if (res->exit_code != 0)
      problems.note("ssh -J sandbox " + std::to_string(i) + ": " + res->describe() + ": " +
                    res->err.substr(0, 200));
  };
  auto t = Clock::now();
  runner::for_each_parallel(argvs.size(), all_at_once ? static_cast<int>(argvs.size()) : 1, one);
  return {since(t), failed.load()};
}

// With RUN_POSTURE_BENCH_PERF_CTL=FIFO, isoharness's part at the largest N is bracketed by
// "enable" and "disable" written to FIFO: `perf record --control fifo:FIFO -D -1 -a` then
// profiles exactly that part (every process on the machine, as the sandboxes' sshd count).
void perf_control(const char* command) {
  const char* fifo = std::getenv("RUN_POSTURE_BENCH_PERF_CTL");
  if (fifo == nullptr || *fifo == '\0') return;
  std::ofstream(fifo) << command << '\n' << std::flush;
}

using Boxes = std::vector<std::unique_ptr<runner::LiveSandbox>>;

// N runc sandboxes of the job, eight deploys at once; one that fails is noted and left out.
Boxes deploy_boxes(int n, const runner::Job& job, const runner::JobContext& ctx, Problems& problems) {
  Boxes boxes(static_cast<std::size_t>(n));
  runner::for_each_parallel(boxes.size(), 8, [&](std::size_t i) {
    try {
      const std::string name = "b" + std::to_string(n) + "x" + std::to_string(i);
      boxes[i] = std::make_unique<runner::LiveSandbox>(ctx, runner::make_request(job, 1, name, ctx.settings));
    } catch (const std::exception& e) {
      problems.note("deploy " + std::to_string(i) + ": " + e.what());
    }
  });
  std::erase(boxes, nullptr);
  return boxes;
}

// Plain OpenSSH's command line for each sandbox (its own known_hosts and config under dir),
// running the same probe script.
std::vector<std::vector<std::string>> plain_ssh_argvs(const Boxes& boxes, const std::string& dir,
                                                      const std::string& private_key, int egress_ms) {
  std::vector<std::vector<std::string>> argvs;
  argvs.reserve(boxes.size());
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const auto& r = boxes[i]->handle().route;
    const std::string kh = dir + "/known_hosts-" + std::to_string(i),
                      cfg = dir + "/config-" + std::to_string(i);
    std::ofstream(kh) << dl::known_hosts_lines(r);
    std::ofstream(cfg) << dl::ssh_client_config(kh, private_key);
    argvs.push_back(dl::ssh_argv(r, cfg, {"bash", "-c", shell_script(egress_ms)}));
  }
  return argvs;
}

// The run's settings: its key, and the posture agent of the build this bench belongs to.
runner::RunSettings settings_for(const std::string& run_id, const runner::RunKey& key, const char* argv0) {
  runner::RunSettings settings;
  settings.run_id = run_id;
  settings.credentials.private_key_path = key.private_path();
  settings.credentials.public_key_path = key.public_path();
  settings.public_key_line = key.public_line();
  const std::string build = std::filesystem::weakly_canonical(argv0).parent_path().parent_path().string();
  settings.isoprobe_bundle = build + "/probes/" + runner::kPostureAgentDir;
  return settings;
}

// The run's one jumphost login, before any N is timed (it is part of none).
void log_in_to_jumphost(runner::JumpPool& jumps, const Boxes& boxes) {
  if (boxes.empty()) return;
  try {
    (void)jumps.jump_for(boxes.front()->handle().route.jump);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("jumphost: ") + e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string src = ISOHARNESS_SOURCE_DIR_BENCH;
  try {
    const Options opt = parse(argc, argv);
    auto profile = scenario::load_deployment(src + "/scenarios/deployments/local.yaml");
    auto planned = runner::plan_scenarios({src + "/scenarios/standard.yaml"}, profile, false);
    const runner::PlanItemPtr item = planned.front().items.at(0);
    const std::string run_id = runner::random_run_id();
    runner::RunKey key(run_id);
    auto backend = deploy::make_backend(scenario::BackendKind::local, profile, {run_id, "", false, nullptr});
    const runner::RunSettings settings = settings_for(run_id, key, argv[0]);
    const int egress_ms = profile.egress_deadline_ms;
    const std::string dir = "/tmp/isoharness-bench-" + run_id;
    std::filesystem::create_directories(dir);
    runner::RunState state;
    runner::JumpPool jumps(settings.credentials, settings.host_key_policy, false, nullptr);
    runner::Journal journal(dir + "/journal", {{"schema", "isoharness.result/v1"}});
    const runner::JobContext ctx{settings, *backend, journal, jumps, state};

    std::printf("run %s: runc sandboxes, node class %s, egress deadline %d ms, isoharness --parallel %d\n",
                run_id.c_str(), opt.node_class.c_str(), egress_ms, opt.parallel);
    std::printf("%-4s %10s %6s %9s %9s %9s %12s %9s %7s %12s\n", "N", "isoharness", "vs N=1", "connect",
                "upload", "posture", "ssh -J all", "ssh fails", "ratio", "ssh -J 1by1");
    double ours_one = 0;
    Problems problems;
    for (int n : {1, 8, 16, 32}) {
      if (n > opt.max_n) break;
      const runner::Job job{"standard", item, "runc", opt.node_class, 1};
      Boxes boxes = deploy_boxes(n, job, ctx, problems);
      const auto argvs = plain_ssh_argvs(boxes, dir, key.private_path(), egress_ms);

      log_in_to_jumphost(jumps, boxes);
      const bool profiled = n == opt.max_n;
      if (profiled) perf_control("enable");
      const auto ticks_before = cpu_ticks();
      OursTimes ours = time_isoharness(boxes, opt.parallel, egress_ms, problems);
      const std::string busy = cpu_busy(ticks_before, cpu_ticks());
      if (profiled) perf_control("disable");
      if (n == 1) ours_one = ours.wall;
      SshTimes all = time_ssh(argvs, true, problems);
      char seq[32] = "-";
      if (opt.sequential) std::snprintf(seq, sizeof seq, "%.2f", time_ssh(argvs, false, problems).wall);
      std::printf("%-4zu %10.2f %6.2f %9.2f %9.2f %9.2f %12.2f %9d %7.2f %12s\n", boxes.size(), ours.wall,
                  ours.wall / ours_one, ours.connect, ours.upload, ours.posture, all.wall, all.failed,
                  ours.wall / all.wall, seq);
      std::printf("     busy during isoharness's part: %s\n", busy.c_str());
      problems.print_and_clear();
      std::fflush(stdout);
      runner::for_each_parallel(boxes.size(), 8, [&](std::size_t i) { boxes[i].reset(); });
    }
    std::filesystem::remove_all(dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "run_posture_bench: %s\n", e.what());
    return 3;
  }
  return 0;
}
