// Uploads without SFTP. A sandbox whose sshd serves no SFTP subsystem (dropbear, a minimal
// sshd, a platform's human-eval image that is not ours to configure) still runs commands,
// so the file goes as the stdin of one constant `sh` script: it creates the directory,
// writes the bytes to <path>.part, sets the mode, renames it into place and prints the size
// it holds. A relative path is taken from the login's working directory, the home
// directory, as SFTP takes it. Nothing of the file or the path is ever part of the script:
// the path and the mode are its positional words (each shell-quoted by exec,
// harness-chosen constants), the bytes only ever travel on stdin. The check is the same as
// over SFTP (transport.h, UploadCheck): the size the sandbox reports must equal what was
// sent, or the file is read back with `cat` (bounded to its size + 1) and its SHA-256
// compared.
#include <fmt/format.h>
#include <openssl/evp.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "harness/transport/sandbox_impl.h"

namespace isoharness::transport {
namespace {

// Larger than any agent the harness uploads; the file is held in memory to be sent.
constexpr std::uintmax_t kMaxExecUploadBytes = std::uintmax_t{64} << 20;

constexpr const char* kWriteScript =
    "set -e; umask 022; case \"$1\" in */*) mkdir -p -- \"${1%/*}\";; esac; "
    "cat > \"$1.part\"; chmod -- \"$2\" \"$1.part\"; mv -f -- \"$1.part\" \"$1\"; wc -c < \"$1\"";

// The decimal size `wc -c` printed (it may pad with blanks); nullopt when it is not one.
std::optional<std::uintmax_t> printed_size(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r'))
    text.remove_suffix(1);
  std::uintmax_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return n;
}

Expected<std::string> read_local(const std::string& local) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(local, ec);
  if (ec) return make_error(fmt::format("upload: cannot read {}: {}", local, ec.message()));
  if (size > kMaxExecUploadBytes)
    return make_error(fmt::format("upload: {} is larger than the 64 MiB an exec upload takes", local));
  std::ifstream in(local, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && !in) return make_error(fmt::format("upload: cannot read {}", local));
  return bytes;
}

// Removes a file that did not verify; the error names why.
Error discard_by_exec(SandboxSession& session, const std::string& remote, Deadline until,
                      const std::string& why) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
  (void)session.exec({"rm", "-f", "--", remote, remote + ".part"},
                     std::max(left, std::chrono::milliseconds(2000)), 4096);
  return make_error(why + "; removed it");
}

Status read_back_by_exec(SandboxSession& session, const std::string& remote, const std::string& local_sha,
                         std::size_t size, Deadline until) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
  auto back = session.exec({"cat", "--", remote}, left, size + 1);
  if (!back) return back.error();
  if (back->exit_code != 0 || back->out.size() != size || sha256_hex(back->out) != local_sha)
    return discard_by_exec(session, remote, until,
                           fmt::format("upload of {} over exec did not verify on reading it back ({} bytes, "
                                       "exit {})",
                                       remote, back->out.size(), back->exit_code));
  return Ok{};
}

}  // namespace

Expected<UploadedFile> upload_by_exec(SandboxSession& session, const std::string& local,
                                      const std::string& remote, int mode, Deadline until,
                                      UploadCheck check) {
  // A relative path is relative to the login's working directory (the home directory, as
  // over SFTP): `isoharness run` uploads its agent to .isoprobe/isoprobe. A leading '-'
  // could read as an option to a command of the script, so it is refused.
  if (remote.empty() || remote.front() == '-' || remote.find('\0') != std::string::npos)
    return make_error("upload: bad remote path");
  auto bytes = read_local(local);
  if (!bytes) return bytes.error();
  const std::string local_sha = sha256_hex(*bytes);
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
  auto r = session.exec_with_input(
      {"sh", "-c", kWriteScript, "isoharness-upload", remote, fmt::format("{:o}", mode & 07777)}, *bytes,
      left, 4096);
  if (!r) return r.error();
  const auto held = printed_size(r->out);
  if (r->exit_code != 0 || !held || *held != bytes->size())
    return discard_by_exec(
        session, remote, until,
        fmt::format("upload of {} to {} over exec did not verify (sent {} bytes; the sandbox "
                    "answered exit {}, `{}`, stderr `{}`)",
                    local, remote, bytes->size(), r->exit_code, r->out.substr(0, 100),
                    r->err.substr(0, 300)));
  if (check == UploadCheck::read_back) {
    auto verified = read_back_by_exec(session, remote, local_sha, bytes->size(), until);
    if (!verified) return verified.error();
  }
  return UploadedFile{remote, bytes->size(), local_sha, check, UploadVia::exec};
}

Status make_dirs_by_exec(SandboxSession& session, const std::vector<std::string>& dirs, Deadline until) {
  if (dirs.empty()) return Ok{};
  std::vector<std::string> argv = {"sh", "-c", "umask 022; mkdir -p -- \"$@\"", "isoharness-mkdir"};
  argv.insert(argv.end(), dirs.begin(), dirs.end());
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
  auto r = session.exec(argv, left, 4096);
  if (!r) return r.error();
  if (r->exit_code != 0)
    return make_error(fmt::format("creating directories over exec failed (exit {}): {}", r->exit_code,
                                  r->err.substr(0, 300)));
  return Ok{};
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr);
  std::string out;
  for (unsigned int i = 0; i < len; ++i) out += fmt::format("{:02x}", digest[i]);
  return out;
}

}  // namespace isoharness::transport
