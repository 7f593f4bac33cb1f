// `isoharness local up` holding several sandboxes in one world: the world's owner (a
// `local up --serve`) takes join requests from other `local up --join RUN_ID` processes
// through a spool directory in the run's state (<state>/<run>/up/spool, 0700, root's), so
// every sandbox of a stand-in platform's night sits on one network, as a cluster's pods do,
// each with its own jumphost route (one jumphost, its own sandbox address) and its own
// policy.
//
// The protocol, one file per step, each written whole (a temporary file renamed):
//   <name>.req    the joiner's request (JoinRequest as JSON); the owner renames it <name>.taken
//   <name>.up     the owner's answer: the line `local up --json` prints for the sandbox
//   <name>.err    the owner's refusal or the deploy's error, one line
//   <name>.down   the joiner's request to tear its sandbox down (SIGINT/SIGTERM, hold over)
//   <name>.gone   the owner's word that it is gone
//   owner.pid     the owner's pid: a joiner whose owner is gone stops waiting
// A joiner that dies without its .down (SIGKILL) is noticed by its pid and its sandbox goes
// as if it had asked. When the owner goes, every sandbox goes with its world.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness/deploy/backend.h"

namespace isoharness::deploy::local {
class LocalBackend;
}

namespace isoharness::cli::local_up {

std::string spool_dir(const std::string& state_dir, const std::string& run_id);

struct JoinRequest {
  std::string name;
  std::string node_class;
  std::string authorized_key;  // the key line that logs in to the sandbox and the jumphost
  std::string identity;        // the private key the printed ssh config names ("" = none)
  nlohmann::json values;
  std::vector<std::string> test_weakenings;
  pid_t pid = 0;  // the joiner's
};
nlohmann::json to_json(const JoinRequest& r);
// A request read from the spool: nullopt (with why) for a document that is not one.
std::optional<JoinRequest> parse_join_request(const std::string& text, std::string& why);

// The line the owner answers with once a sandbox is up (the one `local up --json` prints).
using UpAnswer =
    std::function<nlohmann::json(const deploy::SandboxHandle&, const JoinRequest&, double seconds)>;

// The owner's side: tick() takes new requests (each deployed on a thread of its own),
// tears down what was asked to go or whose joiner died. The destructor waits for the
// threads and destroys every joined sandbox still up.
class JoinServer {
 public:
  JoinServer(deploy::local::LocalBackend& backend, std::string spool, UpAnswer answer);
  ~JoinServer();
  JoinServer(const JoinServer&) = delete;
  JoinServer& operator=(const JoinServer&) = delete;
  void tick();
  std::size_t live() const;

 private:
  struct Joined {
    JoinRequest request;
    std::optional<deploy::SandboxHandle> handle;
    bool busy = true;  // deploying or being torn down
  };
  void take(const std::string& name);
  void deploy(const std::string& name);
  void tear_down(const std::string& name);
  void finished(const std::string& name, const std::string& file, const std::string& text);

  deploy::local::LocalBackend& backend_;
  std::string spool_;
  UpAnswer answer_;
  mutable std::mutex mutex_;
  std::map<std::string, Joined> joined_;
  std::vector<std::thread> threads_;
};

// The joiner's side: asks the owner of run_id for a sandbox, prints its answer, waits for
// `wait()` (a stop signal, or the hold time: it returns the signal or 0, and is called
// every 200 ms with the tick's budget), then asks for the teardown and waits for it.
// Returns the exit code. Throws InfraError when the world has no owner.
int join_world(const std::string& spool, const JoinRequest& request, bool json_out,
               const std::function<int(int ms)>& poll_signal, int hold_seconds);

}  // namespace isoharness::cli::local_up
