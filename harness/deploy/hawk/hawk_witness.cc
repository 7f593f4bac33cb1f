// The hawk backend's outside witness: the one the deployment's operator runs (the profile's
// witness: section, docs/CONTRACTS.md §4.4). Its log is the local world's format
// (harness/deploy/witness_log.h), read over HTTP after each probe run, incrementally from
// where the last read stopped and authenticated line by line (deploy/witness_wire.h, the
// token from the profile's token_file or token_env), or read as a file over SFTP from the
// same offset (log.ssh, the server's host key pinned), starting again from its first byte
// when the address serves another log or a truncated one; the sandbox is known to it by the
// address its ssh-command line names (TCP) and by the probe's nonce (UDP, ICMP, DNS). A log
// that cannot be read, fails its MACs, is further behind than one run's byte bound, or whose
// heartbeats do not cover the probe's window is not judged on (the view is incomplete,
// saying why).
#include <arpa/inet.h>
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "harness/deploy/hawk/hawk_backend.h"
#include "harness/deploy/hawk/witness_cursor.h"
#include "harness/deploy/hawk/witness_http.h"
#include "harness/deploy/witness_log.h"
#include "harness/transport/transport.h"

namespace isoharness::deploy::hawk {
namespace {

bool is_ipv4(const std::string& s) {
  in_addr a{};
  return ::inet_pton(AF_INET, s.c_str(), &a) == 1;
}

long long unix_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

WitnessView unreadable(const std::string& who, const std::string& nonce, const std::string& why) {
  WitnessView view;
  view.witness = who;
  view.nonce = nonce;
  view.complete = false;
  view.note = why;
  return view;
}

// The token the witness MACs its lines with; the error never contains it.
Expected<std::string> witness_token(const scenario::WitnessSettings& w) {
  std::string token;
  if (!w.log_token_env.empty()) {
    const char* value = std::getenv(w.log_token_env.c_str());
    token = value ? std::string(value).substr(0, 4096) : "";
  } else {
    std::ifstream in(w.log_token_file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    token = text.str().substr(0, 4096);
  }
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  if (token.size() < 16)
    return make_error("the witness log's token (" +
                      (w.log_token_env.empty() ? "file " + w.log_token_file : "variable " + w.log_token_env) +
                      ") is missing or shorter than 16 bytes");
  return token;
}

// Where the log is read from: its name (the cursor's key, shown in evidence) and a reader;
// `problem` says why it cannot be read at all.
struct LogSource {
  std::string url;
  std::string problem;
  LogReader read;
};

LogSource log_source(const scenario::WitnessSettings& w, const SandboxHandle& handle);

// log.http: GETs of the framed, MAC'd answer (deploy/witness_wire.h).
LogSource http_source(const scenario::WitnessSettings& w, const SandboxHandle& handle) {
  const std::string host = w.log_host == "jumphost" ? handle.route.jump.host : w.log_host;
  LogSource s{fmt::format("http://{}:{}{}", host, w.log_port, w.log_path), "", nullptr};
  if (!is_ipv4(host)) {
    s.problem = "the witness log's host '" + host + "' is not an IPv4 address";
    return s;
  }
  auto token = witness_token(w);
  if (!token) {
    s.problem = token.error().message;
    return s;
  }
  s.read = [&w, host, key = *token](long long from, const std::string& known_id,
                                    std::size_t budget) -> Expected<LogRead> {
    const std::string path = w.log_path + "?from=" + std::to_string(from);
    auto got = http_get_bounded(host, w.log_port, path, budget, std::chrono::seconds(w.log_timeout_s));
    if (!got)
      return make_error(
          fmt::format("the witness log could not be read from {}: {}", host, got.error().message));
    return LogRead{read_witness_frames(got->body, key, from, known_id), got->body.size()};
  };
  return s;
}

// log.ssh: the file itself, read with SFTP from the cursor's offset (transport/sftp_read.cc).
LogSource ssh_source(const scenario::WitnessSettings& w) {
  const auto& ssh = *w.log_ssh;
  LogSource s{fmt::format("sftp://{}@{}:{}{}", ssh.user, ssh.host, ssh.port, ssh.path), "", nullptr};
  s.read = [&w](long long from, const std::string& known_id, std::size_t budget) -> Expected<LogRead> {
    const auto& ssh = *w.log_ssh;
    transport::Credentials credentials;
    credentials.private_key_path = ssh.identity_file;
    auto got = transport::sftp_read_range(transport::SshEndpoint{ssh.host, ssh.port, ssh.user, ssh.host_key},
                                          credentials, ssh.path, from, budget, kWitnessLogIdBytes,
                                          std::chrono::seconds(w.log_timeout_s));
    if (!got) return make_error("the witness log could not be read over SSH: " + got.error().message);
    return LogRead{raw_witness_frames(got->head, got->bytes, from, got->size, known_id),
                   got->head.size() + got->bytes.size()};
  };
  return s;
}

LogSource log_source(const scenario::WitnessSettings& w, const SandboxHandle& handle) {
  return w.log_ssh ? ssh_source(w) : http_source(w, handle);
}

}  // namespace

// What the probe sent last may still be on its way: the wait ends once the operator's log
// shows a heartbeat it wrote after the wait began (every arrival before it is logged above
// it), else after settle_ms. Without a readable log with heartbeats, settle_ms in full.
void HawkBackend::settle(const SandboxHandle& handle, std::size_t& budget) const {
  const auto max_wait =
      std::chrono::milliseconds(profile_.witness ? profile_.witness->settle_ms : kDefaultSettleMs);
  if (max_wait.count() <= 0) return;
  if (!profile_.witness) {
    std::this_thread::sleep_for(max_wait);
    return;
  }
  const LogSource source = log_source(*profile_.witness, handle);
  if (!source.problem.empty()) {
    std::this_thread::sleep_for(max_wait);
    return;
  }
  const auto beats = [&]() -> long long {
    std::lock_guard lock(witness_mutex_);
    WitnessLogCursor& cursor = cursors_[source.url];
    std::size_t used = 0;
    const bool caught_up = catch_up(cursor, budget, source.read, &used).empty();
    budget -= std::min(budget, used);
    return caught_up ? cursor.beats : -1;
  };
  wait_for_fresh_heartbeat(beats, std::chrono::milliseconds(kSettlePollMs), max_wait);
}

WitnessView HawkBackend::arrival_view(const SandboxHandle& handle, const std::string& nonce,
                                      long long from_ms, long long to_ms, std::size_t& budget) const {
  const auto& w = *profile_.witness;
  const LogSource source = log_source(w, handle);
  const std::string who = fmt::format("the operator's witness (canary {}{}{}; log {})", w.canary,
                                      w.canary6.empty() ? "" : ", " + w.canary6,
                                      w.zone.empty() ? "" : ", zone " + w.zone, source.url);
  if (!source.problem.empty()) return unreadable(who, nonce, source.problem);
  const long long cover_to = to_ms - w.clock_slack_ms;
  std::unique_lock lock(witness_mutex_);
  WitnessLogCursor& cursor = cursors_[source.url];
  std::string behind;
  // Read until a heartbeat at or after the window's end is in (a loaded witness may write it
  // late): while its last heartbeat falls inside the window, a few reads a heartbeat period
  // apart, the lock let go in between. A dead witness writes none, and its view stays
  // incomplete.
  for (int read = 0; read < kCoverReads; ++read) {
    if (read > 0) {
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(kHeartbeatMs));
      lock.lock();
    }
    std::size_t used = 0;
    behind = catch_up(cursor, budget, source.read, &used);
    budget -= std::min(budget, used);
    // Done when caught up to the window's end, or when the witness was already silent at its
    // start (nothing to wait for).
    const auto& beats = cursor.log.heartbeats;
    if (!behind.empty() || beats.empty() || beats.back() >= cover_to ||
        beats.back() < from_ms + w.clock_slack_ms)
      break;
  }
  // TCP carries no nonce: the witness knows the sandbox by the address its ssh-command names.
  // Judged only where the witness's heartbeats cover the probe's own window (the clock slack
  // taken back off): a witness that died or stalled leaves the view incomplete.
  const std::string& sandbox = handle.route.sandbox.host;
  WitnessView view = select_covered_records(cursor.log, is_ipv4(sandbox) ? sandbox : "", "", nonce, from_ms,
                                            to_ms, from_ms + w.clock_slack_ms, cover_to);
  view.witness = who;
  if (!behind.empty() || from_ms <= cursor.forgotten_to_ms) {
    view.complete = false;
    view.note =
        !behind.empty() ? behind : "the probe's window reaches back before the records the harness keeps";
  }
  return view;
}

std::optional<WitnessView> HawkBackend::witness(const SandboxHandle& handle, const std::string& nonce,
                                                std::chrono::system_clock::time_point from,
                                                std::chrono::system_clock::time_point to) const {
  if (!profile_.witness && !profile_.hubble) return std::nullopt;
  const int slack_ms = profile_.witness ? profile_.witness->clock_slack_ms : kDefaultClockSlackMs;
  const long long from_ms = unix_ms(from) - slack_ms;
  const long long to_ms = unix_ms(to) + slack_ms;
  // The drop point is asked at once, beside the arrival witness: the drops it must show are
  // of each way out's first packets, sent as the probe began, not as it ended.
  std::future<DropView> drops;
  if (profile_.hubble)
    drops = std::async(std::launch::async, [&] { return hubble_drops(handle, from_ms, to_ms, slack_ms); });
  // One run's byte bound for every read of the operator's log, the settling ones included.
  std::size_t budget = profile_.witness ? profile_.witness->max_log_bytes : 0;
  settle(handle, budget);
  WitnessView view =
      profile_.witness
          ? arrival_view(handle, nonce, from_ms, to_ms, budget)
          : unreadable("no arrival witness", nonce,
                       "the profile names no operator witness (witness:): arrivals are not observed");
  if (drops.valid()) view.drops = drops.get();
  return view;
}

}  // namespace isoharness::deploy::hawk
