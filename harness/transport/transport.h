// The SSH transport: reach sandboxes through a jumphost, the way a human baseliner does
// with `ssh -J`, using libssh2.
//
//   auto jump = JumpConnection::connect(route.jump, creds, policy, 10s);   // once
//   auto s = (*jump)->open(route.sandbox, 10s);                           // per sandbox
//   auto r = (*s)->exec({"uname", "-r"}, 5s, 1 << 20);
//
// One JumpConnection carries many SandboxSessions. JumpConnection is thread-safe;
// each SandboxSession belongs to one thread at a time (see jump_pump.h for why and how).
// Every remote step takes a deadline and every read is bounded. Host keys are pinned:
// the jumphost's from its endpoint (and an optional known_hosts file), a sandbox's from its
// endpoint; an unknown key is refused unless accept_new is set, a changed key always.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/common/expected.h"
#include "harness/transport/ssh_route.h"

namespace isoharness::transport {

// Keys must be ed25519 or ECDSA: Debian's libssh2 1.10 knows no rsa-sha2 signatures, and
// OpenSSH 8.8+ refuses SHA-1 RSA, for client keys and host keys alike.
struct Credentials {
  std::string private_key_path;  // OpenSSH private key file (unencrypted), used unless use_agent
  std::string public_key_path;   // optional; derived from the private key when empty
  bool use_agent = false;        // try every identity of the ssh agent instead of the file
  std::string agent_socket;      // the agent's socket; empty = $SSH_AUTH_SOCK (read at each login)
};

struct HostKeyPolicy {
  bool accept_new = false;       // accept (and record) a key when nothing is pinned for a host
  std::string known_hosts_path;  // optional known_hosts file with more pinned jumphost keys
};

// A host key that was accepted because nothing was pinned and accept_new was set.
struct AcceptedKey {
  std::string host;
  int port = 0;
  std::string key_line;     // "ssh-ed25519 AAAA..."
  std::string fingerprint;  // "SHA256:..."
};

struct ExecResult {
  int exit_code = -1;       // -1 when the command did not report one (killed, timed out, cut)
  std::string exit_signal;  // e.g. "KILL" when the command died of a signal
  std::string out, err;     // at most max_output bytes each
  // A stream passed max_output: stdout stops the command there; stderr past it is dropped.
  bool out_truncated = false, err_truncated = false;
  bool timed_out = false;  // the deadline passed: the channel was closed
  double seconds = 0;      // wall time from channel open to close
};

// How an upload is checked once written.
//   read_back  the file is read back over SFTP and its SHA-256 compared with the local
//              file's: every byte crosses the connection twice.
//   size       the remote file's size (SFTP fstat of the open handle) must equal what was
//              sent. SSH's MAC already covers the bytes in transit, so this catches what
//              can still go wrong (a short write, a full disk). The caller checks the
//              content some other way: `isoharness run` has the posture agent report the
//              SHA-256 of its own file (isoprobe posture --verify-file) and compares it
//              with UploadedFile::sha256.
// Neither is proof against the sandbox itself: code inside it can answer anything.
enum class UploadCheck { read_back, size };

// How the bytes went: over SFTP, or (a sandbox whose sshd has no SFTP subsystem) as the
// stdin of a constant `sh` command that writes them to the file (exec_upload.cc).
enum class UploadVia { sftp, exec };

struct UploadedFile {
  std::string remote_path;
  std::size_t bytes = 0;  // the file's size (unpacked, when it went packed)
  std::string sha256;     // hex, of the local file as sent (read back and compared under read_back)
  UploadCheck checked = UploadCheck::read_back;
  UploadVia via = UploadVia::sftp;  // packed: exec, or sftp when its unpacker went that way
  // Packed (upload_dir, kUnpackerFile): the xz stream's size, which is what crossed the
  // connection, and the unpacker's own size (sent once per directory). 0 = sent as is.
  std::size_t compressed_bytes = 0;
  std::size_t unpacker_bytes = 0;
};

inline const char* upload_via_name(UploadVia via) {
  return via == UploadVia::sftp ? "sftp" : "exec";
}

// For the result: {"via": "sftp"|"exec", "packing": "xz"|"none", "bytes": N,
// "compressed_bytes": N, "unpacker_bytes": N}.
nlohmann::json upload_record(const UploadedFile& file);

// upload_dir's packed uploads (packed_upload.cc). A directory that holds a file of this name
// at its top (the agent's unpacker, probes/launcher/unxz_main.c: a static x86-64 program
// that reads an xz stream on stdin and writes OUT with MODE) has every other file of at
// least kPackMinBytes sent xz-compressed when the check is UploadCheck::size: the unpacker
// and the first such file's stream in one exec channel (a constant `sh` script puts the
// unpacker in place with `head -c`, then execs it on the rest of stdin; where that fails,
// the unpacker goes as any file first), later files on the stdin of `<remote_dir>/
// isoprobe-unxz <remote> <mode>`. The unpacker prints the size it wrote, which must equal
// the local file's; the caller checks the content as with any size-checked upload (the
// agent's digest of its own, unpacked file). The unpacker stays beside the file and is not
// in the returned list; a packed file's `via` is exec unless the unpacker had to go by
// SFTP. Under UploadCheck::read_back nothing is packed (the bytes cross twice anyway).
inline constexpr const char* kUnpackerFile = "isoprobe-unxz";
inline constexpr std::size_t kPackMinBytes = std::size_t{64} * 1024;
// Compresses now, before any session needs them, the files upload_dir would send packed
// from local_dir (into the process's cache of streams that upload_dir reads), so that the
// first sandboxes of a run find their stream ready instead of waiting for the encoder. A
// run calls it in the background while its first sandboxes are being deployed. Returns how
// many files it packed; anything it cannot read is left for the upload to report.
std::size_t prepack_dir(const std::string& local_dir);

// What sftp_read_range read of a file: its size when opened, its first bytes (up to
// head_bytes, whatever the range) and at most max_bytes from the offset asked.
struct RemoteRange {
  long long size = 0;
  std::string head;
  std::string bytes;
};

// Connects straight to `server` (no jumphost), checks its host key against
// server.host_key (required: an unknown or changed key is refused), logs in with
// `credentials`, opens `remote_path` read-only over SFTP and reads the range; every step
// within `deadline`. Nothing runs on the server but its SFTP subsystem (sftp_read.cc).
Expected<RemoteRange> sftp_read_range(const SshEndpoint& server, const Credentials& credentials,
                                      const std::string& remote_path, long long offset, std::size_t max_bytes,
                                      std::size_t head_bytes, std::chrono::milliseconds deadline);

class SandboxSession {
 public:
  class Impl;
  explicit SandboxSession(std::unique_ptr<Impl> impl);
  ~SandboxSession();
  SandboxSession(const SandboxSession&) = delete;
  SandboxSession& operator=(const SandboxSession&) = delete;

  // Runs argv (each word shell-quoted: sshd hands the command to the login shell) and
  // collects stdout/stderr, each capped at max_output. Passing the cap or the deadline
  // closes the channel and is reported in the result, not as an error. An error means the
  // command could not be started or the connection failed.
  Expected<ExecResult> exec(const std::vector<std::string>& argv, std::chrono::milliseconds deadline,
                            std::size_t max_output);

  // exec, with `input` sent as the command's stdin (then EOF) before its output is read.
  Expected<ExecResult> exec_with_input(const std::vector<std::string>& argv, std::string_view input,
                                       std::chrono::milliseconds deadline, std::size_t max_output);

  // Copies a local file over SFTP to remote_path with permission bits `mode`, then checks
  // it as `check` says (UploadCheck above); on a mismatch the remote file is removed and an
  // error returned. A sandbox whose sshd serves no SFTP subsystem gets the file over an
  // exec channel instead (exec_upload.cc: a constant `sh` command, the bytes on stdin,
  // checked the same way); UploadedFile::via says which way it went.
  Expected<UploadedFile> upload(const std::string& local_path, const std::string& remote_path, int mode,
                                std::chrono::milliseconds deadline,
                                UploadCheck check = UploadCheck::read_back);

  // Every regular file under local_dir (recursively, symlinks skipped) to the same
  // relative path under remote_dir, keeping permission bits; directories are created.
  // Large files go xz-compressed when local_dir holds the unpacker (kUnpackerFile above).
  Expected<std::vector<UploadedFile>> upload_dir(const std::string& local_dir, const std::string& remote_dir,
                                                 std::chrono::milliseconds deadline,
                                                 UploadCheck check = UploadCheck::read_back);

  // The sandbox key accepted on connection (only when nothing was pinned and accept_new).
  const std::optional<AcceptedKey>& accepted_key() const;

 private:
  std::unique_ptr<Impl> impl_;
};

class JumpPump;

class JumpConnection {
 public:
  // TCP connect, handshake, host-key check and key authentication to the jumphost, all
  // within `deadline`; then a pump thread takes over the connection.
  static Expected<std::unique_ptr<JumpConnection>> connect(const SshEndpoint& jump,
                                                           const Credentials& credentials,
                                                           const HostKeyPolicy& policy,
                                                           std::chrono::milliseconds deadline);
  ~JumpConnection();
  JumpConnection(const JumpConnection&) = delete;
  JumpConnection& operator=(const JumpConnection&) = delete;

  // Opens a direct-tcpip channel from the jumphost to sandbox.host:sandbox.port and an SSH
  // session over it, authenticated with the same credentials; host key pinned to
  // sandbox.host_key. Thread-safe: call from many threads at once. The session works only
  // while this connection lives; afterwards (or once alive() is false) its calls fail.
  Expected<std::unique_ptr<SandboxSession>> open(const SshEndpoint& sandbox,
                                                 std::chrono::milliseconds deadline);

  // Every key accepted so far (jumphost and sandboxes), for the result.
  std::vector<AcceptedKey> accepted_keys() const;

  // False once the jumphost connection has failed; open() then fails at once.
  bool alive() const;

 private:
  JumpConnection(std::unique_ptr<JumpPump> pump, Credentials credentials, HostKeyPolicy policy);

  std::unique_ptr<JumpPump> pump_;
  Credentials credentials_;
  HostKeyPolicy policy_;
  mutable std::mutex mutex_;
  std::vector<AcceptedKey> accepted_;
};

}  // namespace isoharness::transport
