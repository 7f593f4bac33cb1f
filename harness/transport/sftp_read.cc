// A bounded, ranged read of one file over SFTP on a direct SSH connection (transport.h
// sftp_read_range): the server's host key must be pinned, nothing runs on the server but
// its SFTP subsystem, the path goes as one SFTP field (never through a shell), and every
// step (connect, handshake, login, open, each read) shares one deadline.
#include <fmt/format.h>
#include <libssh2_sftp.h>

#include <vector>

#include "harness/transport/ssh_session.h"
#include "harness/transport/transport.h"

namespace isoharness::transport {
namespace {

constexpr std::size_t kReadChunk = std::size_t{256} * 1024;

// An SFTP channel and the file open on it, both closed (within 2 s) when it goes.
struct OpenFile {
  SshSession& s;
  LIBSSH2_SFTP* sftp = nullptr;
  LIBSSH2_SFTP_HANDLE* handle = nullptr;
  explicit OpenFile(SshSession& session) : s(session) {}
  ~OpenFile() {
    const Deadline until = Clock::now() + std::chrono::seconds(2);
    if (handle) s.call(until, [&] { return libssh2_sftp_close_handle(handle); });
    if (sftp) s.call(until, [&] { return libssh2_sftp_shutdown(sftp); });
  }
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;

  std::string error(const std::string& doing) const {
    const unsigned long code = sftp ? libssh2_sftp_last_error(sftp) : 0;
    return fmt::format("{}: {}: {}{}", s.what(), doing, s.last_error(),
                       code != 0 ? fmt::format(" (SFTP status {})", code) : "");
  }
};

Status open_file(OpenFile& f, const std::string& path, Deadline until) {
  f.sftp = f.s.call(until, [&] { return libssh2_sftp_init(f.s.get()); });
  if (!f.sftp) return make_error(f.error("starting SFTP"));
  f.handle = f.s.call(until, [&] {
    return libssh2_sftp_open_ex(f.sftp, path.c_str(), static_cast<unsigned>(path.size()), LIBSSH2_FXF_READ, 0,
                                LIBSSH2_SFTP_OPENFILE);
  });
  if (!f.handle) return make_error(f.error("opening " + path + " to read"));
  return Ok{};
}

// At most `max` bytes from byte `at` of the open file, into `out`.
Status read_at(OpenFile& f, long long at, std::size_t max, std::string& out, Deadline until) {
  out.clear();
  libssh2_sftp_seek64(f.handle, static_cast<libssh2_uint64_t>(at));
  std::vector<char> buf(std::min(std::max<std::size_t>(max, 1), kReadChunk));
  while (out.size() < max) {
    const std::size_t want = std::min(buf.size(), max - out.size());
    const ssize_t n = f.s.call(until, [&] { return libssh2_sftp_read(f.handle, buf.data(), want); });
    if (n == 0) break;
    if (n < 0)
      return make_error(f.error(fmt::format("reading from byte {}: {}", at, describe_rc(f.s, int(n)))));
    out.append(buf.data(), static_cast<std::size_t>(n));
  }
  return Ok{};
}

Status read_range(OpenFile& f, long long offset, std::size_t max_bytes, std::size_t head_bytes,
                  RemoteRange& out, Deadline until) {
  LIBSSH2_SFTP_ATTRIBUTES attrs{};
  const int rc = f.s.call(until, [&] { return libssh2_sftp_fstat_ex(f.handle, &attrs, 0); });
  if (rc != 0 || !(attrs.flags & LIBSSH2_SFTP_ATTR_SIZE))
    return make_error(f.error("reading the file's size"));
  out.size = static_cast<long long>(attrs.filesize);
  if (auto head = read_at(f, 0, head_bytes, out.head, until); !head) return head;
  return offset < out.size ? read_at(f, offset, max_bytes, out.bytes, until) : Status(Ok{});
}

}  // namespace

Expected<RemoteRange> sftp_read_range(const SshEndpoint& server, const Credentials& credentials,
                                      const std::string& remote_path, long long offset, std::size_t max_bytes,
                                      std::size_t head_bytes, std::chrono::milliseconds deadline) {
  const Deadline until = Clock::now() + deadline;
  const std::string what = fmt::format("{}@{}:{}", server.user, server.host, server.port);
  if (server.host_key.empty()) return make_error(what + ": no host key is pinned for it");
  if (offset < 0) return make_error(what + ": a read from a negative offset");
  ensure_libssh2_initialised();
  auto fd = tcp_connect(server.host, server.port, until);
  if (!fd) return make_error(what + ": " + fd.error().message);
  auto session =
      SshSession::establish(*fd, server, "", "", credentials, HostKeyPolicy{}, until, what, nullptr);
  if (!session) return session.error();
  OpenFile file(**session);
  RemoteRange out;
  if (auto opened = open_file(file, remote_path, until); !opened) return opened.error();
  if (auto read = read_range(file, offset, max_bytes, head_bytes, out, until); !read) return read.error();
  return out;
}

}  // namespace isoharness::transport
