// Packed uploads (transport.h, kUnpackerFile): a large file sent xz-compressed and unpacked
// in the sandbox by the project's own static unpacker, so a far link carries a third of the
// agent's bytes. The first packed file of a directory goes in one exec channel, which is
// what matters on a far link (each SFTP step is a round trip: about nine for one file): a
// constant `sh` script reads exactly the unpacker's size from stdin with `head -c` into
// place, then execs the unpacker on the rest of stdin, the xz stream. Should that fail (no
// `head`, an odd shell), the unpacker goes as any file (SFTP, or exec where there is none)
// and the stream follows on the unpacker's own stdin; later files take that way too. The
// words are the remote paths, the unpacker's size and the mode (shell-quoted by exec,
// harness-chosen); nothing of a file is ever part of a command. The unpacker writes
// <path>.part, sets the mode, renames it into place and prints the size it wrote, which
// must equal the local file's.
// The content is the caller's to check (UploadCheck::size: the agent's digest of its own
// file). Compressing a 2 MB agent at preset 6 takes about half a second of CPU, and every
// sandbox of a run gets the same agent: streams are kept (by the file's SHA-256, at most
// kPackedCacheEntries of them) for the life of the process.
#include <fmt/format.h>
#include <lzma.h>

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

// The xz stream of `bytes` (whose SHA-256 is `sha`), compressed once per process. The lock
// is held while compressing: the sandboxes that start together wait for the one stream
// instead of each running its own encoder (preset 6 takes about 94 MiB; sixteen at once put
// the harness's peak resident memory at 625 MiB in the default run).
Expected<std::shared_ptr<const std::string>> packed_stream(std::string_view bytes, const std::string& sha) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const std::string>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(sha);
  if (it != cache.end()) return it->second;
  auto xz = xz_compress(bytes);
  if (!xz) return xz.error();
  auto stream = std::make_shared<const std::string>(std::move(*xz));
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

// $1 the file, $2 the unpacker's place, $3 the unpacker's size, $4 the file's mode (octal).
constexpr const char* kUnpackScript =
    "set -e; umask 077; case \"$1\" in */*) mkdir -p -- \"${1%/*}\";; esac; "
    "head -c \"$3\" > \"$2.part\"; chmod 700 \"$2.part\"; mv -f -- \"$2.part\" \"$2\"; exec \"$2\" \"$1\" "
    "\"$4\"";

std::chrono::milliseconds packed_time_left(Deadline until) {
  return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()),
                  std::chrono::milliseconds(1));
}

// How a packed file reaches its unpacker: already in place (`carried` empty), or carried
// in front of the stream by kUnpackScript.
struct Unpacker {
  std::string remote_path;
  std::size_t bytes = 0;
  UploadVia via = UploadVia::exec;
  std::string carried;  // the unpacker's bytes, when they go with the stream
};

// One file, packed, through `unpacker`.
Expected<UploadedFile> upload_packed(SandboxSession& session, const std::string& local,
                                     const std::string& remote, int mode, const Unpacker& unpacker,
                                     Deadline until) {
  if (remote.empty() || remote.front() == '-') return make_error("upload: bad remote path");
  auto bytes = packed_read_whole(local);
  if (!bytes) return bytes.error();
  const std::string sha = sha256_hex(*bytes);
  auto stream = packed_stream(*bytes, sha);
  if (!stream) return stream.error();
  const std::string mode_word = fmt::format("{:o}", mode & 07777);
  const bool carry = !unpacker.carried.empty();
  const std::vector<std::string> argv =
      carry ? std::vector<std::string>{"sh",
                                       "-c",
                                       kUnpackScript,
                                       "isoharness-unpack",
                                       remote,
                                       unpacker.remote_path,
                                       std::to_string(unpacker.carried.size()),
                                       mode_word}
            : std::vector<std::string>{unpacker.remote_path, remote, mode_word};
  auto r = session.exec_with_input(argv, carry ? unpacker.carried + **stream : **stream,
                                   packed_time_left(until), 4096);
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

// The first packed file: the unpacker carried in the same exec; failing that, the unpacker
// sent as any file and then the stream. Leaves `unpacker` in place for the next files.
Expected<UploadedFile> upload_first_packed(SandboxSession& session, const std::string& local,
                                           const std::string& remote, int mode,
                                           const std::string& local_unpacker, Unpacker& unpacker,
                                           Deadline until) {
  auto carried = packed_read_whole(local_unpacker);
  if (!carried) return carried.error();
  unpacker.bytes = carried->size();
  unpacker.carried = std::move(*carried);
  auto one = upload_packed(session, local, remote, mode, unpacker, until);
  unpacker.carried.clear();
  if (one) return one;
  auto sent =
      session.upload(local_unpacker, unpacker.remote_path, 0700, packed_time_left(until), UploadCheck::size);
  if (!sent)
    return make_error(one.error().message +
                      "; sending the unpacker on its own failed too: " + sent.error().message);
  unpacker.via = sent->via;
  return upload_packed(session, local, remote, mode, unpacker, until);
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
    if (f == fs::path(kUnpackerFile)) continue;  // it goes with the first packed file
    (!ec && size >= kPackMinBytes ? packed : plain).push_back(std::move(f));
  }
  if (packed.empty()) plain.emplace_back(kUnpackerFile);  // nothing to unpack: an ordinary file
  files = std::move(plain);
  return packed;
}

Expected<std::vector<UploadedFile>> upload_packed_files(SandboxSession& session, const std::string& local_dir,
                                                        const std::string& base,
                                                        const std::vector<fs::path>& packed,
                                                        std::vector<UploadedFile> sent, Deadline until) {
  Unpacker unpacker;
  unpacker.remote_path = base + "/" + kUnpackerFile;
  for (const auto& f : packed) {
    const fs::path local = fs::path(local_dir) / f;
    std::error_code ec;
    const auto perms = fs::status(local, ec).permissions();
    if (ec) return make_error(fmt::format("upload_dir: cannot stat {}", local.string()));
    const std::string remote = base + "/" + f.generic_string();
    const int mode = static_cast<int>(perms) & 0777;
    auto one = &f == &packed.front()
                   ? upload_first_packed(session, local.string(), remote, mode,
                                         (fs::path(local_dir) / kUnpackerFile).string(), unpacker, until)
                   : upload_packed(session, local.string(), remote, mode, unpacker, until);
    if (!one) return one.error();
    sent.push_back(std::move(*one));
  }
  return sent;
}

std::size_t prepack_dir(const std::string& local_dir) {
  auto tree = list_tree(local_dir);
  if (!tree) return 0;  // upload_dir reports it
  std::size_t packed = 0;
  for (const auto& f : take_packable(local_dir, tree->files, UploadCheck::size)) {
    auto bytes = packed_read_whole((fs::path(local_dir) / f).string());
    if (bytes && packed_stream(*bytes, sha256_hex(*bytes))) ++packed;
  }
  return packed;
}

nlohmann::json upload_record(const UploadedFile& file) {
  return {{"via", upload_via_name(file.via)},
          {"packing", file.compressed_bytes > 0 ? "xz" : "none"},
          {"bytes", file.bytes},
          {"compressed_bytes", file.compressed_bytes},
          {"unpacker_bytes", file.unpacker_bytes}};
}

}  // namespace isoharness::transport
