// The narrow seam through which the local backend changes the host: running ip, nft,
// nsenter, runc and runsc with deadlines, and small filesystem helpers. Every failure is
// an InfraError that names the step and quotes the program's own message.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "harness/common/subprocess.h"
#include "harness/deploy/local/oci_runtime.h"

namespace isoharness::deploy::local {

using namespace std::chrono_literals;

// Runs argv; throws InfraError("<what>: <argv>: <exit and first stderr line>") unless it
// exits 0 within the deadline.
RunResult run_checked(const std::vector<std::string>& argv, const std::string& what,
                      std::chrono::milliseconds deadline = 30s, const std::string& stdin_data = "");

// Runs argv and reports failure as false (for teardown, which must never throw).
bool run_quietly(const std::vector<std::string>& argv, std::chrono::milliseconds deadline = 30s,
                 const std::string& stdin_data = "");

// Starts argv (`runc run --detach`, `runsc run --detach`) under `isoharness-world-helper
// adopt` and waits for argv to exit. Its stdout and stderr are appended to log_path: the
// containers inherit them and must not hold a pipe of ours. The helper stays, as a child
// subreaper, and reaps what argv left running (container init, runsc's sandbox and gofer)
// as soon as it ends, so that `runc delete` and `runsc delete` need not wait for PID 1 to
// reap it. `adopter` gets the helper's pid as soon as it runs, also when this throws;
// reap_adopter reaps it after the container is deleted. Throws InfraError with the log's
// tail on failure.
void run_detaching(const std::string& helper, const std::vector<std::string>& argv,
                   const std::string& log_path, const std::string& what, pid_t& adopter,
                   std::chrono::milliseconds deadline = 60s);
// Force-deletes a container through its runtime (runtime "runc" or "runsc", bin its
// program): runc's is killed with SIGKILL first, since `runc delete --force` of a running
// container waits for it to stop. True when the delete succeeded. Never throws.
bool delete_container(OciRuntime runtime, const std::string& bin, const std::string& root,
                      const std::string& id) noexcept;

// Teardown goes on past a failure (the next step may still free something), but leaves a
// warning naming the step and the error in the log. Call from inside a catch block.
void log_teardown_failure(const std::string& step) noexcept;
// The same for a teardown command that failed (run_quietly or delete_container false).
void log_teardown_step(bool ok, const std::string& step) noexcept;

// Waits briefly for the helper to end (it does once the container is deleted), else ends
// it; sets adopter to -1. Never throws.
void reap_adopter(pid_t& adopter) noexcept;

std::string netns_path(const std::string& ns);
// argv prefixed with `nsenter --net=<netns> --`: runs inside the namespace's network
// stack without remounting /sys (runsc cannot start under `ip netns exec`).
std::vector<std::string> in_netns(const std::string& ns, std::vector<std::string> argv);

// Applies an nft script inside a namespace.
void nft_apply(const std::string& ns, const std::string& script, const std::string& what);

// Names of the network namespaces under /var/run/netns.
std::vector<std::string> list_netns();

// Absolute path of a program on PATH (or in /usr/sbin, /sbin); empty when missing.
std::string find_program(const std::string& name);

// Whole file, at most max bytes; empty when unreadable.
std::string read_file_bounded(const std::string& path, std::size_t max = 1 << 20);
// Writes a file with the given mode (and owner when uid >= 0). Throws InfraError.
void write_file(const std::string& path, const std::string& text, unsigned mode = 0644, long uid = -1,
                long gid = -1);
// The last `lines` lines of a log, for error messages.
std::string log_tail(const std::string& path, int lines = 8);

}  // namespace isoharness::deploy::local
