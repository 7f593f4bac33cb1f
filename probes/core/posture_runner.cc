#include "probes/core/posture_runner.h"

#include <unistd.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

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

}  // namespace

PostureRun run_posture(const PostureOptions& options, std::span<const ProbeDescriptor> probes) {
  PostureRun run;
  // Shared with probe threads, which may outlive this call when they overrun.
  auto opts = std::make_shared<const PostureOptions>(options);
  const auto start = Clock::now();
  const auto run_deadline = start + options.deadline;
  const auto started_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
  nlohmann::json observations = nlohmann::json::array();
  for (const ProbeDescriptor& desc : probes) {
    Observation obs;
    auto now = Clock::now();
    if (now >= run_deadline) {
      obs.skip("the posture deadline of " + std::to_string(options.deadline.count()) +
               " ms passed before this probe");
      obs.name = std::string(desc.name);
      observations.push_back(to_json(obs));
      continue;
    }
    auto deadline = std::min(now + desc.deadline, run_deadline);
    auto slot = std::make_shared<Slot>();
    const ProbeDescriptor* d = &desc;
    std::thread worker([slot, opts, d, deadline] {
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
    bool finished;
    {
      std::unique_lock lock(slot->mu);
      // A little grace past the deadline so a probe that honours it can report.
      finished =
          slot->cv.wait_until(lock, deadline + std::chrono::milliseconds(100), [&] { return slot->done; });
      if (finished) obs = std::move(slot->obs);
    }
    if (finished) {
      worker.join();
    } else {
      worker.detach();
      ++run.abandoned;
      obs = Observation{};
      obs.fail("did not finish within its deadline of " +
               std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) +
               " ms");
      obs.elapsed_ms = ms_between(now, Clock::now());
    }
    obs.name = std::string(desc.name);
    observations.push_back(to_json(obs));
  }
  nlohmann::json context = {
      {"isoprobe_version", isoprobe_version()},
      {"git_revision", isoprobe_git_revision()},
      {"started_unix_ms", started_unix_ms},
      {"elapsed_ms", static_cast<long long>(ms_between(start, Clock::now()) + 0.5)},
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
