// Remote exec over a sandbox session. The command is argv shell-quoted word by word (sshd
// hands it to the user's login shell), stdout and stderr are read alternately, each kept
// up to max_output. Stderr past the cap is read and dropped until the EOF (a login shell's
// rc files may be loud on every exec; that must not hide the command's exit status), still
// within the deadline. A command that passes its deadline or its stdout cap is cut off: we
// send CHANNEL_CLOSE (sshd then closes the command's pipes) and do not wait for the
// command itself — OpenSSH keeps a channel open until its process exits, so a `sleep 30`
// would otherwise hold us. Such a channel is left half-closed inside the session (freed
// with it) and the session stays usable for further commands.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "harness/common/subprocess.h"
#include "harness/transport/sandbox_impl.h"

namespace isoharness::transport {
namespace {

constexpr auto kChannelCloseGrace = std::chrono::seconds(2);

// Reads what is queued on one stream. Returns a libssh2 error (< 0, not EAGAIN) on failure,
// else the number of bytes read; `cut` is set once more than `cap` bytes arrived.
long drain(LIBSSH2_CHANNEL* ch, int stream, std::string& into, std::size_t cap, bool& cut) {
  char buf[16 * 1024];
  long total = 0;
  for (;;) {
    ssize_t n = libssh2_channel_read_ex(ch, stream, buf, sizeof buf);
    if (n == LIBSSH2_ERROR_EAGAIN || n == 0) return total;
    if (n < 0) return n;
    total += n;
    std::size_t room = cap > into.size() ? cap - into.size() : 0;
    std::size_t keep = static_cast<std::size_t>(n) < room ? static_cast<std::size_t>(n) : room;
    into.append(buf, keep);
    if (keep < static_cast<std::size_t>(n)) {
      cut = true;
      return total;
    }
  }
}

// Opens a channel and starts the command on it.
Expected<LIBSSH2_CHANNEL*> start_command(SshSession& s, Deadline until, const std::string& command) {
  LIBSSH2_SESSION* raw = s.get();
  LIBSSH2_CHANNEL* ch = s.call(until, [&] { return libssh2_channel_open_session(raw); });
  if (!ch)
    return make_error(
        fmt::format("{}: cannot open a channel for `{}`: {}", s.what(), command, s.last_error()));
  int rc = s.call(until, [&] { return libssh2_channel_exec(ch, command.c_str()); });
  if (rc != 0) {
    std::string why = describe_rc(s, rc);
    s.call(Clock::now() + kChannelCloseGrace, [&] { return libssh2_channel_free(ch); });
    return make_error(fmt::format("{}: cannot start `{}`: {}", s.what(), command, why));
  }
  return ch;
}

// Bytes libssh2 holds for the channel (either stream) that no read has taken yet.
unsigned long queued_for(LIBSSH2_CHANNEL* ch) {
  unsigned long queued = 0;
  libssh2_channel_window_read_ex(ch, &queued, nullptr);
  return queued;
}

struct ReadOutcome {
  bool finished = false;  // the command's EOF arrived and everything before it was read
  long error = 0;         // a libssh2 error (< 0) that stopped the reading
};

// Reads stdout and stderr alternately until the EOF, an output cap or the deadline.
// A read of either stream first drains the socket into libssh2's queue, whichever stream
// (or channel) the packets are for: the stderr read can take in the rest of stdout and the
// EOF after the stdout read found nothing. Sleeping on the socket then would wait for
// bytes that already arrived, until the deadline. So the loop sleeps only when libssh2
// holds nothing for the channel, or when one more pass read nothing of what it holds
// (data of a kind neither read takes, which only new packets can follow).
ReadOutcome read_output(SshSession& s, LIBSSH2_CHANNEL* ch, Deadline until, std::size_t max_output,
                        ExecResult& result) {
  ReadOutcome outcome;
  bool rescanned = false;  // the last pass read nothing although libssh2 held data
  for (;;) {
    long out_n = drain(ch, 0, result.out, max_output, result.out_truncated);
    long err_n = drain(ch, SSH_EXTENDED_DATA_STDERR, result.err, max_output, result.err_truncated);
    if (out_n < 0 || err_n < 0) {
      outcome.error = out_n < 0 ? out_n : err_n;
      return outcome;
    }
    if (result.out_truncated) break;  // stderr past the cap: dropped, the reading goes on
    if (outcome.finished) break;
    if (libssh2_channel_eof(ch)) {
      outcome.finished = true;  // one more pass: data queued before the EOF
      continue;
    }
    if (out_n > 0 || err_n > 0) {
      rescanned = false;
      continue;
    }
    if (!rescanned && queued_for(ch) > 0) {
      rescanned = true;
      continue;
    }
    rescanned = false;
    if (!s.wait(until)) {
      result.timed_out = true;
      break;
    }
  }
  return outcome;
}

// Normal end: exit-status and CHANNEL_CLOSE follow the EOF. Returns the libssh2 status.
int close_finished(SshSession& s, LIBSSH2_CHANNEL* ch, ExecResult& result) {
  const Deadline grace = Clock::now() + kChannelCloseGrace;
  int rc = s.call(grace, [&] { return libssh2_channel_close(ch); });
  if (rc != 0) return rc;
  char* signal = nullptr;
  std::size_t signal_len = 0;
  libssh2_channel_get_exit_signal(ch, &signal, &signal_len, nullptr, nullptr, nullptr, nullptr);
  if (signal) {
    result.exit_signal.assign(signal, signal_len);
    libssh2_free(s.get(), signal);
  } else {
    result.exit_code = libssh2_channel_get_exit_status(ch);
  }
  return s.call(grace, [&] { return libssh2_channel_free(ch); });
}

// Cut off: send our CLOSE (completing a half-sent packet, which libssh2 requires before
// any other call) and leave the channel for the session to free. Returns false when the
// session could not finish the packet in time and is no longer usable.
bool close_cut_off(SshSession& s, LIBSSH2_CHANNEL* ch) {
  const Deadline grace = Clock::now() + kChannelCloseGrace;
  int rc = 0;
  bool usable = true;
  for (;;) {
    rc = libssh2_channel_close(ch);
    if (rc != LIBSSH2_ERROR_EAGAIN) break;
    if (!(libssh2_session_block_directions(s.get()) & LIBSSH2_SESSION_BLOCK_OUTBOUND)) break;
    if (!s.wait(grace)) {
      usable = false;
      break;
    }
  }
  if (rc == 0) s.call(grace, [&] { return libssh2_channel_free(ch); });
  return usable;
}

// Sends `input` as the command's stdin, then EOF. The command is expected to read it all
// before it writes much (a `cat > file`): its output is read only afterwards.
Status write_input(SshSession& s, LIBSSH2_CHANNEL* ch, std::string_view input, Deadline until,
                   const std::string& command) {
  constexpr std::size_t kPiece = std::size_t{256} * 1024;
  for (std::size_t off = 0; off < input.size();) {
    const std::size_t n = std::min(kPiece, input.size() - off);
    const ssize_t sent = s.call(until, [&] { return libssh2_channel_write(ch, input.data() + off, n); });
    if (sent < 0)
      return make_error(fmt::format("{}: writing stdin of `{}` at byte {} failed: {}", s.what(), command, off,
                                    describe_rc(s, static_cast<int>(sent))));
    off += static_cast<std::size_t>(sent);
  }
  const int rc = s.call(until, [&] { return libssh2_channel_send_eof(ch); });
  if (rc != 0)
    return make_error(
        fmt::format("{}: closing stdin of `{}` failed: {}", s.what(), command, describe_rc(s, rc)));
  return Ok{};
}

}  // namespace

SandboxSession::SandboxSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SandboxSession::~SandboxSession() = default;

const std::optional<AcceptedKey>& SandboxSession::accepted_key() const {
  return impl_->accepted();
}

Expected<ExecResult> SandboxSession::exec(const std::vector<std::string>& argv,
                                          std::chrono::milliseconds deadline, std::size_t max_output) {
  return exec_with_input(argv, {}, deadline, max_output);
}

Expected<ExecResult> SandboxSession::exec_with_input(const std::vector<std::string>& argv,
                                                     std::string_view input,
                                                     std::chrono::milliseconds deadline,
                                                     std::size_t max_output) {
  if (argv.empty()) return make_error("exec: empty argv");
  SshSession& s = impl_->session();
  if (impl_->broken) return make_error(s.what() + ": the session is unusable after an earlier failure");
  const auto start = Clock::now();
  const std::string command = shell_join(argv);
  auto ch = start_command(s, start + deadline, command);
  if (!ch) return ch.error();
  if (!input.empty()) {
    if (auto wrote = write_input(s, *ch, input, start + deadline, command); !wrote) {
      if (!close_cut_off(s, *ch)) impl_->broken = true;
      return wrote.error();
    }
  }

  ExecResult result;
  const ReadOutcome read = read_output(s, *ch, start + deadline, max_output, result);
  if (read.error < 0) {
    impl_->broken = true;
    return make_error(fmt::format("{}: reading the output of `{}` failed: {}", s.what(), command,
                                  describe_rc(s, static_cast<int>(read.error))));
  }
  if (read.finished) {
    if (int rc = close_finished(s, *ch, result); rc != 0) {
      impl_->broken = true;
      return make_error(
          fmt::format("{}: closing the channel of `{}` failed: {}", s.what(), command, describe_rc(s, rc)));
    }
  } else if (!close_cut_off(s, *ch)) {
    impl_->broken = true;
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace isoharness::transport
