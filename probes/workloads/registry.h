// The one explicit list of timing workloads. Adding a workload: define its descriptor in
// its family's file, declare it below, and add one line to the list in registry.cc.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "workloads/workload.h"

namespace isoprobe::workloads {

// syscalls.cc
extern const Workload kGetpid;
extern const Workload kClockGettime;
// files.cc
extern const Workload kOpenClose;
extern const Workload kStat;
extern const Workload kRead4kCached;
extern const Workload kWriteFsync;
extern const Workload kDirChurn1000;
// processes.cc
extern const Workload kForkWait;
extern const Workload kSpawnExec;
// ipc.cc
extern const Workload kPipePingpong;
extern const Workload kFutexWake;
extern const Workload kUnixRtt;
// net_loopback.cc
extern const Workload kTcpRttLoopback;
// cpu_memory.cc
extern const Workload kPageFaults;
extern const Workload kCpuHash;
extern const Workload kMemoryBandwidth;
// task_like.cc
extern const Workload kCompileC;
extern const Workload kShellPipeline;
extern const Workload kInterpreterStartup;

// Every workload, in the order they run.
std::span<const Workload* const> registered_workloads();

// Looks for a problem in a list of descriptors: a duplicate name, a name that is not
// lower_snake_case, a missing run function or description. Returns the first problem as
// a sentence naming the workload, or nothing when the list is sound.
std::optional<std::string> registry_problem(std::span<const Workload* const> list);

// Finds a workload by name in the registry; nullptr when there is none.
const Workload* find_workload(std::string_view name);

}  // namespace isoprobe::workloads
