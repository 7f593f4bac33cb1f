// Internal: what a SandboxSession holds — its own libssh2 session, running over the
// socket end the jumphost pump bridges to a direct-tcpip channel.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/transport/ssh_session.h"
#include "harness/transport/transport.h"

namespace isoharness::transport {

class SandboxSession::Impl {
 public:
  Impl(std::unique_ptr<SshSession> session, std::optional<AcceptedKey> accepted)
      : session_(std::move(session)), accepted_(std::move(accepted)) {}

  SshSession& session() { return *session_; }
  const std::optional<AcceptedKey>& accepted() const { return accepted_; }
  // Set when a channel could not be closed in time: the session's state is unknown, so
  // every later call fails instead of waiting on it.
  bool broken = false;

 private:
  std::unique_ptr<SshSession> session_;
  std::optional<AcceptedKey> accepted_;
};

// Uploads over an exec channel, for sandboxes whose sshd serves no SFTP (exec_upload.cc).
Expected<UploadedFile> upload_by_exec(SandboxSession& session, const std::string& local,
                                      const std::string& remote, int mode, Deadline until, UploadCheck check);
Status make_dirs_by_exec(SandboxSession& session, const std::vector<std::string>& dirs, Deadline until);

// What upload_dir sends of a local directory (sftp_upload.cc): its directories and regular
// files, relative to it, at most 4096 entries; anything else (a symlink) is left out.
struct LocalTree {
  std::vector<std::filesystem::path> dirs, files;
};
Expected<LocalTree> list_tree(const std::string& local_dir);

// Packed uploads (packed_upload.cc, transport.h kUnpackerFile). take_packable moves the
// files to send packed, and the unpacker, out of `files` (nothing moves unless the unpacker
// is among them, the check is UploadCheck::size and some file is large enough);
// upload_packed_files sends them, the unpacker with the first, and appends them to `sent`.
std::vector<std::filesystem::path> take_packable(const std::string& local_dir,
                                                 std::vector<std::filesystem::path>& files,
                                                 UploadCheck check);
Expected<std::vector<UploadedFile>> upload_packed_files(SandboxSession& session, const std::string& local_dir,
                                                        const std::string& base,
                                                        const std::vector<std::filesystem::path>& packed,
                                                        std::vector<UploadedFile> sent, Deadline until);

// Lower-case hex SHA-256 of bytes held in memory (the exec and packed uploads' checks).
std::string sha256_hex(std::string_view bytes);

}  // namespace isoharness::transport
