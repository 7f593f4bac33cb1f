// The registry: one line per timing workload, in the order they run. Each name here is a
// `const Workload` descriptor defined in its family's file. Adding a workload is one
// descriptor there and one line here. (No include guard: expanded with different macros.)
ISOPROBE_WORKLOAD(kGetpid)              // syscalls.cc
ISOPROBE_WORKLOAD(kClockGettime)        // syscalls.cc
ISOPROBE_WORKLOAD(kOpenClose)           // files.cc
ISOPROBE_WORKLOAD(kStat)                // files.cc
ISOPROBE_WORKLOAD(kRead4kCached)        // files.cc
ISOPROBE_WORKLOAD(kWriteFsync)          // files.cc
ISOPROBE_WORKLOAD(kPageFaults)          // cpu_memory.cc
ISOPROBE_WORKLOAD(kForkWait)            // processes.cc
ISOPROBE_WORKLOAD(kSpawnExec)           // processes.cc
ISOPROBE_WORKLOAD(kPipePingpong)        // ipc.cc
ISOPROBE_WORKLOAD(kFutexWake)           // ipc.cc
ISOPROBE_WORKLOAD(kTcpRttLoopback)      // net_loopback.cc
ISOPROBE_WORKLOAD(kUnixRtt)             // ipc.cc
ISOPROBE_WORKLOAD(kDirChurn1000)        // files.cc
ISOPROBE_WORKLOAD(kCpuHash)             // cpu_memory.cc
ISOPROBE_WORKLOAD(kMemoryBandwidth)     // cpu_memory.cc
ISOPROBE_WORKLOAD(kCompileC)            // task_like.cc
ISOPROBE_WORKLOAD(kShellPipeline)       // task_like.cc
ISOPROBE_WORKLOAD(kInterpreterStartup)  // task_like.cc
