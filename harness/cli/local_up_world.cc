#include "harness/cli/local_up_world.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "harness/common/error.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/local_backend.h"
#include "harness/deploy/local/run_state.h"

namespace isoharness::cli::local_up {
namespace {

namespace dl = deploy::local;
namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxRequestBytes = std::size_t{4} << 20;
constexpr std::size_t kMaxAnswerBytes = std::size_t{1} << 20;
constexpr auto kDeployWait = std::chrono::seconds(900);  // a joiner waits this long for its sandbox
constexpr auto kGoneWait = std::chrono::seconds(120);    // and this long for its teardown

// Alive and not a zombie (a killed joiner may wait for its parent to reap it).
bool process_alive(pid_t pid) {
  if (pid <= 0) return false;
  const std::string stat = dl::read_file_bounded("/proc/" + std::to_string(pid) + "/stat", 4096);
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

pid_t owner_of(const std::string& spool) {
  const std::string text = dl::read_file_bounded(spool + "/owner.pid", 64);
  char* end = nullptr;
  const long pid = std::strtol(text.c_str(), &end, 10);
  return text.empty() || pid <= 0 ? 0 : static_cast<pid_t>(pid);
}

// Written whole: a temporary file renamed into place, so a reader never sees half of it.
void put(const std::string& path, const std::string& text) {
  dl::write_file(path + ".tmp", text, 0600);
  fs::rename(path + ".tmp", path);
}

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

std::string str_field(const json& doc, const char* key) {
  const auto it = doc.find(key);
  return it != doc.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::string spool_dir(const std::string& state_dir, const std::string& run_id) {
  return dl::RunPaths{state_dir, run_id}.dir() + "/up/spool";
}

json to_json(const JoinRequest& r) {
  return {{"name", r.name},
          {"node_class", r.node_class},
          {"authorized_key", r.authorized_key},
          {"identity", r.identity},
          {"values", r.values},
          {"test_weakenings", r.test_weakenings},
          {"pid", r.pid}};
}

std::optional<JoinRequest> parse_join_request(const std::string& text, std::string& why) {
  const json doc = json::parse(text, nullptr, false);
  if (!doc.is_object()) {
    why = "not a JSON object";
    return std::nullopt;
  }
  JoinRequest r;
  r.name = str_field(doc, "name");
  r.node_class = str_field(doc, "node_class");
  r.authorized_key = str_field(doc, "authorized_key");
  r.identity = str_field(doc, "identity");
  if (doc.contains("values") && doc["values"].is_object()) r.values = doc["values"];
  if (doc.contains("test_weakenings") && doc["test_weakenings"].is_array())
    for (const auto& w : doc["test_weakenings"])
      if (w.is_string() && r.test_weakenings.size() < 32) r.test_weakenings.push_back(w.get<std::string>());
  if (doc.contains("pid") && doc["pid"].is_number_integer()) r.pid = doc["pid"].get<pid_t>();
  if (!dl::valid_sandbox_name(r.name)) why = "the sandbox name is not [a-z0-9-]{1,24}";
  if (r.values.is_null()) why = "no sandbox values";
  if (r.authorized_key.empty()) why = "no authorized key";
  if (r.pid <= 0) why = "no joiner pid";
  if (!why.empty()) return std::nullopt;
  return r;
}

JoinServer::JoinServer(dl::LocalBackend& backend, std::string spool, UpAnswer answer)
    : backend_(backend), spool_(std::move(spool)), answer_(std::move(answer)) {
  std::error_code ec;
  fs::create_directories(spool_, ec);
  ::chmod(spool_.c_str(), 0700);
  if (ec) throw InfraError("local up --serve: cannot create the join spool " + spool_ + ": " + ec.message());
  put(spool_ + "/owner.pid", std::to_string(::getpid()) + "\n");
}

JoinServer::~JoinServer() {
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  std::lock_guard lock(mutex_);
  for (auto& [name, j] : joined_)
    if (j.handle) {
      dl::remove_up_record(backend_.paths(), name);
      backend_.destroy(*j.handle);
    }
  joined_.clear();
  std::error_code ec;
  fs::remove(spool_ + "/owner.pid", ec);
}

std::size_t JoinServer::live() const {
  std::lock_guard lock(mutex_);
  return joined_.size();
}

void JoinServer::finished(const std::string& name, const std::string& file, const std::string& text) {
  try {
    put(spool_ + "/" + name + file, text);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "local up --serve: cannot answer %s: %s\n", name.c_str(), e.what());
  }
}

void JoinServer::take(const std::string& name) {
  const std::string req = spool_ + "/" + name + ".req";
  std::error_code ec;
  fs::rename(req, spool_ + "/" + name + ".taken", ec);
  if (ec) return;
  std::string why;
  auto request =
      parse_join_request(dl::read_file_bounded(spool_ + "/" + name + ".taken", kMaxRequestBytes), why);
  if (request && request->name != name) why = "the request names another sandbox than its file";
  std::lock_guard lock(mutex_);
  if (why.empty() && joined_.count(name)) why = "a sandbox named " + name + " is already in this world";
  if (!why.empty()) return finished(name, ".err", "refused: " + why + "\n");
  joined_[name] = Joined{*request, std::nullopt, true};
  threads_.emplace_back([this, name] { deploy(name); });
}

void JoinServer::deploy(const std::string& name) {
  JoinRequest request;
  {
    std::lock_guard lock(mutex_);
    request = joined_.at(name).request;
  }
  deploy::SandboxRequest req;
  req.run_id = backend_.run_id();
  req.name = request.name;
  req.item_id = "joined " + request.name;
  req.values = request.values;
  req.node_class = request.node_class;
  req.authorized_key = request.authorized_key;
  req.test_weakenings = request.test_weakenings;
  const auto t0 = Clock::now();
  try {
    deploy::SandboxHandle h = backend_.deploy(req);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    {
      std::lock_guard lock(mutex_);
      joined_.at(name).handle = h;
    }
    finished(name, ".up", answer_(h, request, seconds).dump() + "\n");
  } catch (const std::exception& e) {
    finished(name, ".err", std::string(e.what()) + "\n");
    std::lock_guard lock(mutex_);
    joined_.erase(name);
    return;
  }
  std::lock_guard lock(mutex_);
  joined_.at(name).busy = false;
}

void JoinServer::tear_down(const std::string& name) {
  std::optional<deploy::SandboxHandle> handle;
  {
    std::lock_guard lock(mutex_);
    handle = joined_.at(name).handle;
  }
  if (handle) {
    dl::remove_up_record(backend_.paths(), name);
    backend_.destroy(*handle);
  }
  finished(name, ".gone", "gone\n");
  std::lock_guard lock(mutex_);
  joined_.erase(name);
}

void JoinServer::tick() {
  std::vector<std::string> requests;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(spool_, ec)) {
    const std::string file = entry.path().filename().string();
    if (file.size() > 4 && file.ends_with(".req")) requests.push_back(file.substr(0, file.size() - 4));
  }
  for (const auto& name : requests) take(name);
  std::lock_guard lock(mutex_);
  for (auto& [name, j] : joined_) {
    if (j.busy) continue;
    if (!exists(spool_ + "/" + name + ".down") && process_alive(j.request.pid)) continue;
    j.busy = true;
    threads_.emplace_back([this, n = name] { tear_down(n); });
  }
}

namespace {

// Waits until one of the files appears, a signal comes, the owner goes, or the deadline.
// Returns the file's suffix, "signal:<n>", "owner" or "deadline".
std::string await(const std::string& base, const std::vector<std::string>& suffixes, pid_t owner,
                  Clock::duration deadline, const std::function<int(int)>& poll_signal) {
  const auto until = Clock::now() + deadline;
  for (;;) {
    for (const auto& s : suffixes)
      if (exists(base + s)) return s;
    if (const int sig = poll_signal ? poll_signal(200) : 0; sig > 0) return "signal:" + std::to_string(sig);
    if (!poll_signal) ::usleep(200 * 1000);
    if (!process_alive(owner)) return "owner";
    if (Clock::now() >= until) return "deadline";
  }
}

int signal_of(const std::string& why) {
  return why.starts_with("signal:") ? std::atoi(why.c_str() + 7) : 0;
}

// Asks for the teardown and waits for it; the exit code the joiner ends with.
int leave(const std::string& base, pid_t owner, int sig) {
  try {
    put(base + ".down", "down\n");
  } catch (const std::exception&) {  // the owner notices the joiner's exit instead
  }
  const std::string why = await(base, {".gone"}, owner, kGoneWait, nullptr);
  if (why == "deadline")
    std::fprintf(stderr, "isoharness local up --join: the owner did not tear it down in time\n");
  std::error_code ec;
  for (const char* s : {".taken", ".up", ".down", ".gone", ".err"}) fs::remove(base + s, ec);
  return sig > 0 ? 128 + sig : kExitPass;
}

}  // namespace

int join_world(const std::string& spool, const JoinRequest& request, bool json_out,
               const std::function<int(int ms)>& poll_signal, int hold_seconds) {
  const pid_t owner = owner_of(spool);
  if (!process_alive(owner))
    throw InfraError("local up --join: no world owner serves joins at " + spool +
                     " (start one with `isoharness local up --serve`)");
  const std::string base = spool + "/" + request.name;
  for (const char* s : {".req", ".taken", ".up", ".down"})
    if (exists(base + s))
      throw UserError("local up --join: a sandbox named " + request.name + " is already asked for");
  put(base + ".req", to_json(request).dump() + "\n");
  const std::string why = await(base, {".up", ".err"}, owner, kDeployWait, poll_signal);
  if (why == ".err" || why == "owner" || why == "deadline") {
    const std::string text = why == ".err"    ? dl::read_file_bounded(base + ".err", 4096)
                             : why == "owner" ? "the world's owner is gone\n"
                                              : "no answer from the world's owner in time\n";
    std::fprintf(stderr, "isoharness local up --join: %s", text.c_str());
    if (why == "deadline") leave(base, owner, 0);
    return kExitInfrastructure;
  }
  if (why != ".up") return leave(base, owner, signal_of(why));
  const json up = json::parse(dl::read_file_bounded(base + ".up", kMaxAnswerBytes), nullptr, false);
  if (json_out)
    std::printf("%s\n", up.dump().c_str());
  else
    std::printf("sandbox %s joined run %s\n\n  %s\n\nSIGINT (Ctrl-C) or SIGTERM tears it down.\n",
                request.name.c_str(), str_field(up, "run_id").c_str(), str_field(up, "ssh_command").c_str());
  std::fflush(stdout);
  const auto hold = hold_seconds > 0 ? std::chrono::seconds(hold_seconds) : std::chrono::hours(24 * 365);
  const std::string held = await(base, {}, owner, hold, poll_signal);
  if (held == "owner") {
    std::fprintf(stderr, "isoharness local up --join: the world's owner is gone, and the sandbox with it\n");
    return kExitInfrastructure;
  }
  return leave(base, owner, signal_of(held));
}

}  // namespace isoharness::cli::local_up
