// visit_page (browser_screenshot.h): headless Chromium driven over the DevTools protocol on a
// pipe (--remote-debugging-pipe: Chromium reads commands on fd 3 and writes answers and
// events on fd 4, each message a JSON text ended by a NUL byte). No port is opened.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "tests/support/test_support.h"
#include "tests/unit/browser_screenshot.h"

namespace isoharness::test {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr auto kWhole = std::chrono::seconds(90);         // the whole visit, start to close
constexpr auto kSettle = std::chrono::milliseconds(700);  // after the load event: late errors count
constexpr std::size_t kMaxMessage = 64 << 20;             // a screenshot answer is a few MiB
constexpr std::size_t kMaxLog = 16 << 10;                 // the end of chromium's own output

std::vector<std::string> chromium_argv(const std::string& profile_dir, int width, int height) {
  std::vector<std::string> argv;
  if (::geteuid() == 0) argv = {"unshare", "--net", "--"};
  for (const char* a : {"chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                        "--no-first-run", "--disable-background-networking", "--disable-component-update",
                        "--disable-sync", "--hide-scrollbars", "--remote-debugging-pipe"}) {
    argv.push_back(a);
  }
  argv.push_back("--user-data-dir=" + profile_dir);
  argv.push_back("--window-size=" + std::to_string(width) + "," + std::to_string(height));
  argv.push_back("about:blank");
  return argv;
}

// The child's side: commands on fd 3, answers on fd 4, its output into log_path.
// `args` ends with a null pointer; everything is made before fork().
[[noreturn]] void exec_chromium(char* const* args, int commands, int answers, const char* log_path) {
  ::setpgid(0, 0);
  const int c = ::fcntl(commands, F_DUPFD, 10), a = ::fcntl(answers, F_DUPFD, 10);
  const int log = ::open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (c < 0 || a < 0 || log < 0 || ::dup2(c, 3) < 0 || ::dup2(a, 4) < 0 || ::dup2(log, 1) < 0 ||
      ::dup2(log, 2) < 0)
    ::_exit(127);
  for (int fd = 5; fd < 1024; ++fd) ::close(fd);
  ::execvp(args[0], args);
  ::_exit(127);
}

class Devtools {
 public:
  Devtools(PageVisit& visit, Clock::time_point deadline) : visit_(visit), deadline_(deadline) {}
  ~Devtools() { stop(); }
  Devtools(const Devtools&) = delete;
  Devtools& operator=(const Devtools&) = delete;

  bool start(const std::vector<std::string>& argv, const std::string& log_path) {
    int to[2], from[2];
    if (::pipe2(to, O_CLOEXEC) != 0) return false;
    if (::pipe2(from, O_CLOEXEC) != 0) {
      ::close(to[0]), ::close(to[1]);
      return false;
    }
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) exec_chromium(args.data(), to[0], from[1], log_path.c_str());
    ::close(to[0]), ::close(from[1]);
    write_fd_ = to[1], read_fd_ = from[0];
    return pid_ > 0;
  }

  // Sends a command and waits for its answer; null (and a line in the log) when it fails.
  json call(const std::string& method, const json& params = json::object(), const std::string& session = "") {
    const int id = ++next_id_;
    json msg = {{"id", id}, {"method", method}, {"params", params}};
    if (!session.empty()) msg["sessionId"] = session;
    const std::string text = msg.dump() + '\0';
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(write_fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return fail(method + ": cannot write to chromium");
      done += static_cast<std::size_t>(n);
    }
    json answer = wait_for([id](const json& m) { return m.value("id", 0) == id; }, deadline_);
    if (answer.is_null()) return fail(method + ": no answer");
    if (answer.contains("error")) return fail(method + ": " + answer["error"].dump());
    return answer.value("result", json::object());
  }

  // Reads messages until one satisfies `want` (returned) or `until` passes (null).
  json wait_for(const std::function<bool(const json&)>& want, Clock::time_point until) {
    for (;;) {
      for (auto nul = buffer_.find('\0'); nul != std::string::npos; nul = buffer_.find('\0')) {
        json m = json::parse(buffer_.substr(0, nul), nullptr, false);
        buffer_.erase(0, nul + 1);
        if (m.is_discarded()) continue;
        observe(m);
        if (want(m)) return m;
      }
      if (!read_some(std::min(until, deadline_))) return nullptr;
    }
  }

  bool loaded() const { return loaded_; }

  // Browser.close, then at most 10 s for the process to end before its group is killed.
  void stop() {
    if (pid_ <= 0) return;
    if (write_fd_ >= 0) {
      const std::string close = json{{"id", ++next_id_}, {"method", "Browser.close"}}.dump() + '\0';
      [[maybe_unused]] const auto n = ::write(write_fd_, close.data(), close.size());
    }
    int status = 0;
    for (int i = 0; i < 200 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, &status, WNOHANG);
    if (write_fd_ >= 0) ::close(write_fd_);
    if (read_fd_ >= 0) ::close(read_fd_);
    write_fd_ = read_fd_ = -1;
    pid_ = -1;
  }

 private:
  json fail(const std::string& why) {
    visit_.log += why + "\n";
    return nullptr;
  }

  bool read_some(Clock::time_point until) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0 || buffer_.size() > kMaxMessage) return false;
    pollfd p{read_fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) return true;
    if (ready <= 0) return false;
    char chunk[65536];
    const ssize_t n = ::read(read_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) return true;
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  static std::string console_text(const json& params) {
    std::string text;
    for (const auto& arg : params.value("args", json::array())) {
      if (!text.empty()) text += ' ';
      if (arg.contains("value"))
        text += arg["value"].is_string() ? arg["value"].get<std::string>() : arg["value"].dump();
      else
        text += arg.value("description", arg.value("type", "?"));
    }
    return text;
  }

  void observe(const json& m) {
    const std::string method = m.value("method", "");
    const json params = m.value("params", json::object());
    if (method == "Network.requestWillBeSent") {
      visit_.requests.push_back(params["request"].value("url", ""));
    } else if (method == "Runtime.consoleAPICalled") {
      const std::string type = params.value("type", "");
      if (type == "error" || type == "assert")
        visit_.console_errors.push_back("console." + type + ": " + console_text(params));
    } else if (method == "Runtime.exceptionThrown") {
      const json d = params.value("exceptionDetails", json::object());
      const json e = d.value("exception", json::object());
      visit_.console_errors.push_back("exception: " + e.value("description", d.value("text", "?")));
    } else if (method == "Log.entryAdded") {
      const json e = params.value("entry", json::object());
      if (e.value("level", "") == "error")
        visit_.console_errors.push_back("log: " + e.value("text", "") + " " + e.value("url", ""));
    } else if (method == "Page.loadEventFired") {
      loaded_ = true;
    }
  }

  PageVisit& visit_;
  Clock::time_point deadline_;
  pid_t pid_ = -1;
  int write_fd_ = -1, read_fd_ = -1, next_id_ = 0;
  std::string buffer_;
  bool loaded_ = false;
};

// A value evaluated in the page, or null with the reason in the log.
json evaluate(Devtools& dt, const std::string& session, const std::string& expression, PageVisit& visit) {
  const json r = dt.call("Runtime.evaluate", {{"expression", expression}, {"returnByValue", true}}, session);
  if (r.is_null()) return nullptr;
  if (r.contains("exceptionDetails")) {
    visit.log += "evaluate: " + r["exceptionDetails"].dump() + "\n";
    return nullptr;
  }
  return r["result"].value("value", json());
}

// Opens a tab, listens to it, navigates and waits for the load event and the settling time.
std::string open_and_load(Devtools& dt, PageVisit& visit) {
  const json target = dt.call("Target.createTarget", {{"url", "about:blank"}});
  if (target.is_null()) return "";
  const json attached =
      dt.call("Target.attachToTarget", {{"targetId", target["targetId"]}, {"flatten", true}});
  if (attached.is_null()) return "";
  std::string session = attached.value("sessionId", "");
  for (const char* domain : {"Page", "Runtime", "Log", "Network"})
    if (dt.call(std::string(domain) + ".enable", json::object(), session).is_null()) return "";
  const json nav = dt.call("Page.navigate", {{"url", visit.url}}, session);
  if (nav.is_null()) return "";
  if (nav.contains("errorText")) {
    visit.log += "navigate: " + nav["errorText"].get<std::string>() + "\n";
    return "";
  }
  const auto load_by = Clock::now() + std::chrono::seconds(30);
  if (!dt.loaded() &&
      dt.wait_for([](const json& m) { return m.value("method", "") == "Page.loadEventFired"; }, load_by)
          .is_null()) {
    visit.log += "no load event within 30 s\n";
    return "";
  }
  dt.wait_for([](const json&) { return false; }, Clock::now() + kSettle);
  return session;
}

}  // namespace

PageVisit visit_page(const std::string& html, const std::string& profile_dir, int width, int height,
                     const std::string& expression) {
  PageVisit visit;
  visit.url = "file://" + html;
  const std::string log_path = (std::filesystem::path(profile_dir) / "chromium.log").string();
  {
    Devtools dt(visit, Clock::now() + kWhole);
    if (!dt.start(chromium_argv(profile_dir, width, height), log_path)) {
      visit.log += "chromium did not start\n";
      return visit;
    }
    const std::string session = open_and_load(dt, visit);
    if (!session.empty()) {
      const json load = evaluate(dt, session,
                                 "(() => { const n = performance.getEntriesByType('navigation')[0]; return n "
                                 "? n.loadEventEnd : -1; })()",
                                 visit);
      visit.load_ms = load.is_number() ? load.get<double>() : -1;
      visit.ok = load.is_number();
      if (!expression.empty()) {
        visit.evaluated = evaluate(dt, session, expression, visit);
        visit.ok = visit.ok && !visit.evaluated.is_null();
      }
    }
  }
  std::error_code ec;
  if (std::filesystem::exists(log_path, ec)) {
    std::string out = read_text(log_path);
    if (out.size() > kMaxLog) out = "..." + out.substr(out.size() - kMaxLog);
    visit.log += "chromium:\n" + out;
  }
  return visit;
}

}  // namespace isoharness::test
