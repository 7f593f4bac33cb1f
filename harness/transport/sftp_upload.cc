// Uploads over SFTP, verified: each file is written, given its mode with SETSTAT (the
// remote umask would otherwise narrow it), then checked as the caller asks (UploadCheck in
// transport.h): read back and compared by SHA-256 with the local file, or its remote size
// compared with what was sent. SFTP needs only sshd's internal-sftp, nothing from the
// sandbox image.
#include <fmt/format.h>
#include <libssh2_sftp.h>
#include <openssl/evp.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include "harness/transport/sandbox_impl.h"

namespace isoharness::transport {
namespace {

constexpr std::uintmax_t kMaxFileBytes = 512ull << 20;
constexpr std::size_t kMaxFiles = 4096;
// Bytes handed to one libssh2_sftp_write/read call. libssh2 splits a call into SFTP
// packets and keeps them in flight together, so a large chunk pipelines where 32 KiB
// waited a round trip through the jumphost per call.
constexpr std::size_t kSftpChunk = std::size_t{1024} * 1024;

class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr); }
  ~Sha256() { EVP_MD_CTX_free(ctx_); }
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const char* data, std::size_t n) { EVP_DigestUpdate(ctx_, data, n); }
  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx_, digest, &len);
    std::string out;
    for (unsigned int i = 0; i < len; ++i) out += fmt::format("{:02x}", digest[i]);
    return out;
  }

 private:
  EVP_MD_CTX* ctx_;
};

// One SFTP subsystem channel on a sandbox session, shut down when it goes out of scope.
class Sftp {
 public:
  Sftp(SshSession& s, LIBSSH2_SFTP* sftp) : s_(s), sftp_(sftp) {}
  ~Sftp() {
    s_.call(Clock::now() + std::chrono::seconds(2), [&] { return libssh2_sftp_shutdown(sftp_); });
  }
  Sftp(const Sftp&) = delete;
  Sftp& operator=(const Sftp&) = delete;

  std::string error(const std::string& doing) const {
    unsigned long code = libssh2_sftp_last_error(sftp_);
    std::string why = s_.last_error();
    if (code != 0) why += fmt::format(" (SFTP status {})", code);
    return fmt::format("{}: {}: {}", s_.what(), doing, why);
  }

  Expected<UploadedFile> upload(const std::string& local, const std::string& remote, int mode, Deadline until,
                                UploadCheck check);
  Status make_dir(const std::string& remote, Deadline until);

 private:
  // Writes the local file to the open handle, hashing what it sends; returns bytes sent.
  // The handle is closed when writing fails.
  Expected<std::uintmax_t> write_from(std::ifstream& in, std::uintmax_t size, LIBSSH2_SFTP_HANDLE* h,
                                      Sha256& sha, const std::string& remote, Deadline until);
  Status set_mode(const std::string& remote, int mode, Deadline until) {
    LIBSSH2_SFTP_ATTRIBUTES attrs{};
    attrs.flags = LIBSSH2_SFTP_ATTR_PERMISSIONS;
    attrs.permissions = static_cast<unsigned long>(mode & 07777);
    int rc = s_.call(until, [&] {
      return libssh2_sftp_stat_ex(sftp_, remote.c_str(), static_cast<unsigned>(remote.size()),
                                  LIBSSH2_SFTP_SETSTAT, &attrs);
    });
    if (rc != 0) return make_error(error(fmt::format("setting mode {:o} on {}", mode, remote)));
    return Ok{};
  }
  Status close(LIBSSH2_SFTP_HANDLE* h, Deadline until, const std::string& remote) {
    int rc = s_.call(until, [&] { return libssh2_sftp_close_handle(h); });
    if (rc != 0) return make_error(error("closing " + remote));
    return Ok{};
  }
  Expected<std::string> read_back_sha256(const std::string& remote, std::uintmax_t expect_bytes,
                                         Deadline until);
  Expected<std::uintmax_t> remote_size(LIBSSH2_SFTP_HANDLE* h, const std::string& remote, Deadline until);
  Status discard(const std::string& remote, Deadline until, const std::string& why);

  SshSession& s_;
  LIBSSH2_SFTP* sftp_;
};

Expected<std::string> Sftp::read_back_sha256(const std::string& remote, std::uintmax_t expect_bytes,
                                             Deadline until) {
  LIBSSH2_SFTP_HANDLE* h = s_.call(until, [&] {
    return libssh2_sftp_open_ex(sftp_, remote.c_str(), static_cast<unsigned>(remote.size()), LIBSSH2_FXF_READ,
                                0, LIBSSH2_SFTP_OPENFILE);
  });
  if (!h) return make_error(error("reopening " + remote + " to verify it"));
  Sha256 sha;
  std::uintmax_t seen = 0;
  std::vector<char> chunk(kSftpChunk);
  char* buf = chunk.data();
  for (;;) {
    ssize_t n = s_.call(until, [&] { return libssh2_sftp_read(h, buf, kSftpChunk); });
    if (n == 0) break;
    if (n < 0) {
      (void)close(h, until, remote);
      return make_error(error("reading back " + remote));
    }
    seen += static_cast<std::uintmax_t>(n);
    if (seen > expect_bytes) break;  // longer than what we wrote: the hash will differ
    sha.update(buf, static_cast<std::size_t>(n));
  }
  auto closed = close(h, until, remote);
  if (!closed) return closed.error();
  if (seen != expect_bytes) return std::string("size mismatch: " + std::to_string(seen) + " bytes");
  return sha.hex();
}

Expected<std::uintmax_t> Sftp::remote_size(LIBSSH2_SFTP_HANDLE* h, const std::string& remote,
                                           Deadline until) {
  LIBSSH2_SFTP_ATTRIBUTES attrs{};
  int rc = s_.call(until, [&] { return libssh2_sftp_fstat_ex(h, &attrs, 0); });
  if (rc != 0) return make_error(error("reading the size of " + remote));
  if (!(attrs.flags & LIBSSH2_SFTP_ATTR_SIZE))
    return make_error(s_.what() +
                      ": the sandbox's SFTP server "
                      "did not report the size of " +
                      remote);
  return static_cast<std::uintmax_t>(attrs.filesize);
}

// Removes a file that did not verify; the error names why.
Status Sftp::discard(const std::string& remote, Deadline until, const std::string& why) {
  s_.call(until, [&] {
    return libssh2_sftp_unlink_ex(sftp_, remote.c_str(), static_cast<unsigned>(remote.size()));
  });
  return make_error(fmt::format("{}: {}; removed it", s_.what(), why));
}

Expected<std::uintmax_t> Sftp::write_from(std::ifstream& in, std::uintmax_t size, LIBSSH2_SFTP_HANDLE* h,
                                          Sha256& sha, const std::string& remote, Deadline until) {
  std::uintmax_t sent = 0;
  std::vector<char> chunk(kSftpChunk);
  char* buf = chunk.data();
  while (sent < size) {
    in.read(buf, static_cast<std::streamsize>(kSftpChunk));
    std::size_t got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    sha.update(buf, got);
    for (std::size_t off = 0; off < got;) {
      ssize_t n = s_.call(until, [&] { return libssh2_sftp_write(h, buf + off, got - off); });
      if (n <= 0) {
        (void)close(h, until, remote);
        return make_error(error(fmt::format("writing {} at byte {}", remote, sent + off)));
      }
      off += static_cast<std::size_t>(n);
    }
    sent += got;
  }
  return sent;
}

Expected<UploadedFile> Sftp::upload(const std::string& local, const std::string& remote, int mode,
                                    Deadline until, UploadCheck check) {
  if (remote.empty() || remote.find('\0') != std::string::npos) return make_error("upload: bad remote path");
  std::error_code ec;
  auto size = std::filesystem::file_size(local, ec);
  if (ec) return make_error(fmt::format("upload: cannot read {}: {}", local, ec.message()));
  if (size > kMaxFileBytes) return make_error(fmt::format("upload: {} is larger than 512 MiB", local));
  std::ifstream in(local, std::ios::binary);
  if (!in) return make_error(fmt::format("upload: cannot open {}", local));

  LIBSSH2_SFTP_HANDLE* h = s_.call(until, [&] {
    return libssh2_sftp_open_ex(sftp_, remote.c_str(), static_cast<unsigned>(remote.size()),
                                LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_TRUNC, mode,
                                LIBSSH2_SFTP_OPENFILE);
  });
  if (!h) return make_error(error("creating " + remote));
  Sha256 sha;
  auto wrote = write_from(in, size, h, sha, remote, until);
  if (!wrote) return wrote.error();
  const std::uintmax_t sent = *wrote;
  std::optional<std::uintmax_t> written;
  if (check == UploadCheck::size) {
    auto n = remote_size(h, remote, until);
    if (!n) {
      (void)close(h, until, remote);
      return n.error();
    }
    written = *n;
  }
  auto closed = close(h, until, remote);
  if (!closed) return closed.error();
  std::string local_sha = sha.hex();
  if (check == UploadCheck::size && (*written != size || sent != size)) {
    return discard(
               remote, until,
               fmt::format("upload of {} to {} did not verify (sent {} of {} bytes, the sandbox holds {})",
                           local, remote, sent, size, *written))
        .error();
  }

  auto moded = set_mode(remote, mode, until);
  if (!moded) return moded.error();

  if (check == UploadCheck::read_back) {
    auto remote_sha = read_back_sha256(remote, sent, until);
    if (!remote_sha) return remote_sha.error();
    if (*remote_sha != local_sha || sent != size)
      return discard(remote, until,
                     fmt::format("upload of {} to {} did not verify (local sha256 {}, remote {})", local,
                                 remote, local_sha, *remote_sha))
          .error();
  }
  return UploadedFile{remote, static_cast<std::size_t>(sent), local_sha, check};
}

Status Sftp::make_dir(const std::string& remote, Deadline until) {
  int rc = s_.call(until, [&] {
    return libssh2_sftp_mkdir_ex(sftp_, remote.c_str(), static_cast<unsigned>(remote.size()), 0755);
  });
  if (rc == 0) return Ok{};
  if (rc == LIBSSH2_ERROR_TIMEOUT) return make_error(error("creating directory " + remote));
  LIBSSH2_SFTP_ATTRIBUTES attrs{};
  rc = s_.call(until, [&] {
    return libssh2_sftp_stat_ex(sftp_, remote.c_str(), static_cast<unsigned>(remote.size()),
                                LIBSSH2_SFTP_STAT, &attrs);
  });
  if (rc == 0 && LIBSSH2_SFTP_S_ISDIR(attrs.permissions)) return Ok{};
  return make_error(error("creating directory " + remote));
}

Expected<std::unique_ptr<Sftp>> start_sftp(SshSession& s, Deadline until) {
  LIBSSH2_SFTP* sftp = s.call(until, [&] { return libssh2_sftp_init(s.get()); });
  if (!sftp) {
    return make_error(
        fmt::format("{}: cannot start SFTP (does sshd have `Subsystem sftp internal-sftp`?): {}", s.what(),
                    s.last_error()));
  }
  return std::make_unique<Sftp>(s, sftp);
}

}  // namespace

Expected<UploadedFile> SandboxSession::upload(const std::string& local_path, const std::string& remote_path,
                                              int mode, std::chrono::milliseconds deadline,
                                              UploadCheck check) {
  SshSession& s = impl_->session();
  if (impl_->broken) return make_error(s.what() + ": the session is unusable after an earlier failure");
  Deadline until = Clock::now() + deadline;
  auto sftp = start_sftp(s, until);
  if (!sftp) {  // no SFTP subsystem: over an exec channel (exec_upload.cc)
    auto by_exec = upload_by_exec(*this, local_path, remote_path, mode, until, check);
    if (!by_exec) return make_error(sftp.error().message + "; over exec: " + by_exec.error().message);
    return by_exec;
  }
  return (*sftp)->upload(local_path, remote_path, mode, until, check);
}

namespace {

// upload_dir where the sandbox serves no SFTP: the directories in one exec, then each file
// over its own exec channel.
Expected<std::vector<UploadedFile>> upload_tree_by_exec(SandboxSession& session, const std::string& local_dir,
                                                        const std::string& base,
                                                        const std::vector<std::filesystem::path>& dirs,
                                                        const std::vector<std::filesystem::path>& files,
                                                        Deadline until, UploadCheck check) {
  std::vector<std::string> remote_dirs = {base};
  remote_dirs.reserve(dirs.size() + 1);
  for (const auto& d : dirs) remote_dirs.push_back(base + "/" + d.generic_string());
  auto made = make_dirs_by_exec(session, remote_dirs, until);
  if (!made) return made.error();
  std::vector<UploadedFile> uploaded;
  uploaded.reserve(files.size());
  for (const auto& f : files) {
    const std::filesystem::path local = std::filesystem::path(local_dir) / f;
    struct stat st {};
    if (::stat(local.c_str(), &st) != 0)
      return make_error(fmt::format("upload_dir: cannot stat {}", local.string()));
    auto one = upload_by_exec(session, local.string(), base + "/" + f.generic_string(),
                              static_cast<int>(st.st_mode & 0777), until, check);
    if (!one) return one.error();
    uploaded.push_back(std::move(*one));
  }
  return uploaded;
}

// The tree as is: over SFTP, or over exec channels when the sandbox serves no SFTP.
Expected<std::vector<UploadedFile>> send_tree(SandboxSession& session, SshSession& s,
                                              const std::string& local_dir, const std::string& base,
                                              const std::vector<std::filesystem::path>& dirs,
                                              const std::vector<std::filesystem::path>& files, Deadline until,
                                              UploadCheck check) {
  namespace fs = std::filesystem;
  auto sftp = start_sftp(s, until);
  if (!sftp) {  // no SFTP subsystem: over exec channels (exec_upload.cc)
    auto by_exec = upload_tree_by_exec(session, local_dir, base, dirs, files, until, check);
    if (!by_exec) return make_error(sftp.error().message + "; over exec: " + by_exec.error().message);
    return by_exec;
  }
  auto made = (*sftp)->make_dir(base, until);
  if (!made) return made.error();
  for (const auto& d : dirs) {
    made = (*sftp)->make_dir(base + "/" + d.generic_string(), until);
    if (!made) return made.error();
  }
  std::vector<UploadedFile> uploaded;
  uploaded.reserve(files.size());
  for (const auto& f : files) {
    fs::path local = fs::path(local_dir) / f;
    struct stat st {};
    if (::stat(local.c_str(), &st) != 0)
      return make_error(fmt::format("upload_dir: cannot stat {}", local.string()));
    auto one = (*sftp)->upload(local.string(), base + "/" + f.generic_string(),
                               static_cast<int>(st.st_mode & 0777), until, check);
    if (!one) return one.error();
    uploaded.push_back(std::move(*one));
  }
  return uploaded;
}

}  // namespace

Expected<LocalTree> list_tree(const std::string& local_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(local_dir, ec))
    return make_error(fmt::format("upload_dir: {} is not a directory", local_dir));
  LocalTree tree;
  for (auto it = fs::recursive_directory_iterator(local_dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (tree.dirs.size() + tree.files.size() >= kMaxFiles)
      return make_error(fmt::format("upload_dir: {} holds more than {} entries", local_dir, kMaxFiles));
    auto status = it->symlink_status();
    if (fs::is_directory(status))
      tree.dirs.push_back(fs::relative(it->path(), local_dir));
    else if (fs::is_regular_file(status))
      tree.files.push_back(fs::relative(it->path(), local_dir));
  }
  if (ec) return make_error(fmt::format("upload_dir: cannot list {}: {}", local_dir, ec.message()));
  return tree;
}

Expected<std::vector<UploadedFile>> SandboxSession::upload_dir(const std::string& local_dir,
                                                               const std::string& remote_dir,
                                                               std::chrono::milliseconds deadline,
                                                               UploadCheck check) {
  namespace fs = std::filesystem;
  SshSession& s = impl_->session();
  if (impl_->broken) return make_error(s.what() + ": the session is unusable after an earlier failure");
  Deadline until = Clock::now() + deadline;
  // Collect first, so a bad tree is refused before anything is sent.
  auto tree = list_tree(local_dir);
  if (!tree) return tree.error();
  auto& [dirs, files] = *tree;

  std::string base = remote_dir;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  const auto packed = take_packable(local_dir, files, check);
  if (packed.empty()) return send_tree(*this, s, local_dir, base, dirs, files, until, check);
  // Packed files make their own directories; the rest goes first, when there is any.
  auto sent = dirs.empty() && files.empty() ? std::vector<UploadedFile>{}
                                            : send_tree(*this, s, local_dir, base, dirs, files, until, check);
  if (!sent) return sent;
  return upload_packed_files(*this, local_dir, base, packed, std::move(*sent), until);
}

}  // namespace isoharness::transport
