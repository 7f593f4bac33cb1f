// Packed uploads (transport.h, kUnpackerFile): a large file sent xz-compressed and unpacked
// in the sandbox by the project's own static unpacker, so a far link carries a third of the
// agent's bytes. The compressed stream goes as the stdin of one exec of the unpacker, whose
// words are the remote path and the mode (shell-quoted by exec, harness-chosen); nothing of
// the file is ever part of a command. The unpacker writes <path>.part, sets the mode,
// renames it into place and prints the size it wrote, which must equal the local file's.
// The content is the caller's to check (UploadCheck::size: the agent's digest of its own
// file). Compressing a 2 MB agent at preset 6 takes about half a second of CPU, and every
// sandbox of a run gets the same agent: streams are kept (by the file's SHA-256, at most
// kPackedCacheEntries of them) for the life of the process.
#include <fmt/format.h>
#include <lzma.h>
#include <openssl/evp.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>

#include "harness/transport/sandbox_impl.h"

namespace isoharness::transport {
namespace {

namespace fs = std::filesystem;

constexpr std::uintmax_t kMaxPackedBytes = std::uintmax_t{256} << 20;
constexpr std::size_t kPackedCacheEntries = 8;

std::string packed_sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr);
  std::string out;
  for (unsigned int i = 0; i < len; ++i) out += fmt::format("{:02x}", digest[i]);
  return out;
}

Expected<std::string> packed_read_whole(const std::string& local) {
  std::error_code ec;
  const auto size = fs::file_size(local, ec);
  if (ec) return make_error(fmt::format("upload: cannot read {}: {}", local, ec.message()));
  if (size > kMaxPackedBytes) return make_error(fmt::format("upload: {} is too large to pack", local));
  std::ifstream in(local, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() != size) return make_error(fmt::format("upload: cannot read {}", local));
  return bytes;
}

Expected<std::string> xz_compress(std::string_view bytes) {
  std::string out(lzma_stream_buffer_bound(bytes.size()), '\0');
  std::size_t used = 0;
  const lzma_ret r = lzma_easy_buffer_encode(
      6, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(),
      reinterpret_cast<std::uint8_t*>(out.data()), &used, out.size());
  if (r != LZMA_OK) return make_error(fmt::format("upload: xz compression failed (liblzma {})", int(r)));
  out.resize(used);
  return out;
}

// The xz stream of `bytes` (whose SHA-256 is `sha`), compressed once per process.
Expected<std::shared_ptr<const std::string>> packed_stream(std::string_view bytes, const std::string& sha) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const std::string>> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(sha);
    if (it != cache.end()) return it->second;
  }
  auto xz = xz_compress(bytes);
  if (!xz) return xz.error();
  auto stream = std::make_shared<const std::string>(std::move(*xz));
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= kPackedCacheEntries) cache.erase(cache.begin());
  cache.emplace(sha, stream);
  return stream;
}

std::optional<std::uintmax_t> packed_printed_size(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  std::uintmax_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return n;
}

std::chrono::milliseconds packed_time_left(Deadline until) {
  return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()),
                  std::chrono::milliseconds(1));
}

// One file, packed, through the unpacker already at `unpacker`.
Expected<UploadedFile> upload_packed(SandboxSession& session, const std::string& local,
                                     const std::string& remote, int mode, const UploadedFile& unpacker,
                                     Deadline until) {
  auto bytes = packed_read_whole(local);
  if (!bytes) return bytes.error();
  const std::string sha = packed_sha256_hex(*bytes);
  auto stream = packed_stream(*bytes, sha);
  if (!stream) return stream.error();
  auto r = session.exec_with_input({unpacker.remote_path, remote, fmt::format("{:o}", mode & 07777)},
                                   **stream, packed_time_left(until), 4096);
  if (!r) return r.error();
  const auto wrote = packed_printed_size(r->out);
  if (r->exit_code != 0 || !wrote || *wrote != bytes->size()) {
    (void)session.exec({"rm", "-f", "--", remote, remote + ".part"}, std::chrono::milliseconds(5000), 4096);
    return make_error(
        fmt::format("packed upload of {} to {} did not verify (sent {} bytes xz for {}; the "
                    "unpacker answered exit {}, `{}`, stderr `{}`); removed it",
                    local, remote, (*stream)->size(), bytes->size(), r->exit_code, r->out.substr(0, 100),
                    r->err.substr(0, 300)));
  }
  UploadedFile f{remote, bytes->size(), sha, UploadCheck::size, unpacker.via};
  f.compressed_bytes = (*stream)->size();
  f.unpacker_bytes = unpacker.bytes;
  return f;
}

}  // namespace

std::vector<fs::path> take_packable(const std::string& local_dir, std::vector<fs::path>& files,
                                    UploadCheck check) {
  std::vector<fs::path> packed;
  if (check != UploadCheck::size ||
      std::find(files.begin(), files.end(), fs::path(kUnpackerFile)) == files.end())
    return packed;
  std::vector<fs::path> plain;
  plain.reserve(files.size());
  for (auto& f : files) {
    std::error_code ec;
    const auto size = fs::file_size(fs::path(local_dir) / f, ec);
    const bool pack = f != fs::path(kUnpackerFile) && !ec && size >= kPackMinBytes;
    (pack ? packed : plain).push_back(std::move(f));
  }
  files = std::move(plain);
  return packed;
}

Expected<std::vector<UploadedFile>> upload_packed_files(SandboxSession& session, const std::string& local_dir,
                                                        const std::string& base,
                                                        const std::vector<fs::path>& packed,
                                                        std::vector<UploadedFile> sent, Deadline until) {
  const std::string unpacker_path = base + "/" + kUnpackerFile;
  auto it = std::find_if(sent.begin(), sent.end(),
                         [&](const UploadedFile& f) { return f.remote_path == unpacker_path; });
  if (it == sent.end()) return make_error("upload_dir: the unpacker " + unpacker_path + " was not sent");
  const UploadedFile unpacker = *it;
  sent.erase(it);
  for (const auto& f : packed) {
    const fs::path local = fs::path(local_dir) / f;
    std::error_code ec;
    const auto perms = fs::status(local, ec).permissions();
    if (ec) return make_error(fmt::format("upload_dir: cannot stat {}", local.string()));
    auto one = upload_packed(session, local.string(), base + "/" + f.generic_string(),
                             static_cast<int>(perms) & 0777, unpacker, until);
    if (!one) return one.error();
    sent.push_back(std::move(*one));
  }
  return sent;
}

nlohmann::json upload_record(const UploadedFile& file) {
  return {{"via", upload_via_name(file.via)},
          {"packing", file.compressed_bytes > 0 ? "xz" : "none"},
          {"bytes", file.bytes},
          {"compressed_bytes", file.compressed_bytes},
          {"unpacker_bytes", file.unpacker_bytes}};
}

}  // namespace isoharness::transport
