#include "probes/core/posture_runner.h"

#include <unistd.h>

#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "harness/common/build_info.h"

namespace isoprobe {

std::string isoprobe_version() {
  return isoharness_build_version();
}
std::string isoprobe_git_revision() {
  return isoharness_build_revision();
}

namespace {

struct Slot {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Observation obs;
};

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// One probe on its own thread, started; finish() waits for it to its deadline.
class StartedProbe {
 public:
  StartedProbe(const ProbeDescriptor& desc, std::shared_ptr<const PostureOptions> opts,
               Clock::time_point deadline)
      : desc_(desc), started_(Clock::now()), deadline_(deadline), slot_(std::make_shared<Slot>()) {
    worker_ = std::thread([slot = slot_, opts = std::move(opts), d = &desc, deadline] {
      Observation o;
      auto t0 = Clock::now();
      try {
        Context ctx{*opts, deadline};
        o = d->run(ctx);
      } catch (const std::exception& e) {
        o = Observation{};
        o.fail(std::string("internal error: ") + e.what());
      }
      o.elapsed_ms = ms_between(t0, Clock::now());
      std::lock_guard lock(slot->mu);
      slot->obs = std::move(o);
      slot->done = true;
      slot->cv.notify_all();
    });
  }

  // The observation; a probe past its deadline (plus a little grace, so that one that
  // honours it can report) is left running on a detached thread and counted in *abandoned.
  Observation finish(int* abandoned) {
    Observation obs;
    bool finished;
    {
      std::unique_lock lock(slot_->mu);
      finished =
          slot_->cv.wait_until(lock, deadline_ + std::chrono::milliseconds(100), [&] { return slot_->done; });
      if (finished) obs = std::move(slot_->obs);
    }
    if (finished) {
      worker_.join();
    } else {
      worker_.detach();
      ++*abandoned;
      obs = Observation{};
      obs.fail("did not finish within its deadline of " +
               std::to_string(
                   std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - started_).count()) +
               " ms");
      obs.elapsed_ms = ms_between(started_, Clock::now());
    }
    obs.name = std::string(desc_.name);
    return obs;
  }

 private:
  const ProbeDescriptor& desc_;
  Clock::time_point started_, deadline_;
  std::shared_ptr<Slot> slot_;
  std::thread worker_;
};

}  // namespace

// Probes run one after another, each on a thread of its own bounded by its deadline; those
// marked `overlaps` (egress, which waits on blocked targets) start first and run beside the
// others. Observations keep the registry's order.
PostureRun run_posture(const PostureOptions& options, std::span<const ProbeDescriptor> probes) {
  PostureRun run;
  // Shared with probe threads, which may outlive this call when they overrun.
  auto opts = std::make_shared<const PostureOptions>(options);
  const auto start = Clock::now();
  const auto run_deadline = start + options.deadline;
  const auto started_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
  std::vector<std::unique_ptr<StartedProbe>> overlapping(probes.size());
  auto start_probe = [&](const ProbeDescriptor& desc) {
    const auto now = Clock::now();
    return std::make_unique<StartedProbe>(desc, opts, std::min(now + desc.deadline, run_deadline));
  };
  for (std::size_t i = 0; i < probes.size(); ++i)
    if (probes[i].overlaps) overlapping[i] = start_probe(probes[i]);
  std::vector<Observation> observed(probes.size());
  for (std::size_t i = 0; i < probes.size(); ++i) {
    if (probes[i].overlaps) continue;
    if (Clock::now() >= run_deadline) {
      observed[i].skip("the posture deadline of " + std::to_string(options.deadline.count()) +
                       " ms passed before this probe");
      observed[i].name = std::string(probes[i].name);
      continue;
    }
    observed[i] = start_probe(probes[i])->finish(&run.abandoned);
  }
  for (std::size_t i = 0; i < probes.size(); ++i)
    if (overlapping[i]) observed[i] = overlapping[i]->finish(&run.abandoned);
  nlohmann::json observations = nlohmann::json::array();
  for (const auto& obs : observed) observations.push_back(to_json(obs));
  nlohmann::json context = {
      {"isoprobe_version", isoprobe_version()},
      {"git_revision", isoprobe_git_revision()},
      {"started_unix_ms", started_unix_ms},
      {"elapsed_ms", std::llround(ms_between(start, Clock::now()))},
      {"deadline_ms", options.deadline.count()},
      {"egress_deadline_ms", options.egress_deadline.count()},
      {"pid", static_cast<long long>(::getpid())},
      {"probes", probes.size()},
      {"abandoned_probes", run.abandoned},
  };
  run.document = {{"schema", kPostureSchema}, {"context", context}, {"observations", observations}};
  return run;
}

}  // namespace isoprobe
