// File family: metadata and data paths through the filesystem, all inside the scratch
// directory: open+close, stat, a 4 KiB read served from the page cache, a 4 KiB write made
// durable with fsync, and directory churn (create, list and remove 1,000 files).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "workloads/registry.h"

namespace isoprobe::workloads {

namespace {

constexpr std::size_t kBlock = 4096;
constexpr std::size_t kCachedFileBlocks = 256;  // 1 MiB, read back block by block

// A file in the scratch directory holding `bytes` bytes, removed when this goes away.
class ScratchFile {
 public:
  ScratchFile(const Env& env, const char* name) : path_(env.scratch + "/" + name) {}
  ~ScratchFile() { ::unlink(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Creates the file with `bytes` bytes of a fixed pattern; false (errno set) on failure.
  bool create(std::size_t bytes) {
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    std::vector<char> block(kBlock, 'x');
    for (std::size_t done = 0; done < bytes; done += kBlock) {
      if (::write(fd, block.data(), kBlock) != static_cast<ssize_t>(kBlock)) {
        ::close(fd);
        return false;
      }
    }
    return ::close(fd) == 0;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void run_open_close(benchmark::State& state, const Env& env) {
  ScratchFile file(env, "open_close.dat");
  if (!file.create(kBlock)) return fail_with_errno(state, "create " + file.path());
  const char* path = file.path().c_str();
  for (auto _ : state) {
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail_with_errno(state, "open");
    ::close(fd);
  }
}

void run_stat(benchmark::State& state, const Env& env) {
  ScratchFile file(env, "stat.dat");
  if (!file.create(kBlock)) return fail_with_errno(state, "create " + file.path());
  const char* path = file.path().c_str();
  struct stat st {};
  for (auto _ : state) {
    if (::stat(path, &st) != 0) return fail_with_errno(state, "stat");
    benchmark::DoNotOptimize(st);
  }
}

void run_read_4k_cached(benchmark::State& state, const Env& env) {
  ScratchFile file(env, "read_4k_cached.dat");
  if (!file.create(kBlock * kCachedFileBlocks)) return fail_with_errno(state, "create " + file.path());
  int fd = ::open(file.path().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail_with_errno(state, "open");
  std::vector<char> buf(kBlock);
  for (std::size_t i = 0; i < kCachedFileBlocks; ++i) {  // warm the cache, outside the timing
    if (::pread(fd, buf.data(), kBlock, static_cast<off_t>(i * kBlock)) != static_cast<ssize_t>(kBlock)) {
      ::close(fd);
      return fail_with_errno(state, "pread (warm-up)");
    }
  }
  std::size_t block = 0;
  for (auto _ : state) {
    ssize_t got = ::pread(fd, buf.data(), kBlock, static_cast<off_t>(block * kBlock));
    if (got != static_cast<ssize_t>(kBlock)) {
      ::close(fd);
      return fail_with_errno(state, "pread");
    }
    block = (block + 1) % kCachedFileBlocks;
  }
  ::close(fd);
}

void run_write_fsync(benchmark::State& state, const Env& env) {
  ScratchFile file(env, "write_fsync.dat");
  int fd = ::open(file.path().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail_with_errno(state, "create " + file.path());
  std::vector<char> buf(kBlock, 'w');
  for (auto _ : state) {
    if (::pwrite(fd, buf.data(), kBlock, 0) != static_cast<ssize_t>(kBlock) || ::fsync(fd) != 0) {
      ::close(fd);
      return fail_with_errno(state, "pwrite+fsync");
    }
  }
  ::close(fd);
}

constexpr int kChurnFiles = 1000;

// Lists `dir` and counts its entries other than "." and ".."; -1 when it cannot be read.
int count_entries(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return -1;
  int n = 0;
  while (const dirent* e = ::readdir(d)) {
    std::string_view name(e->d_name);
    if (name != "." && name != "..") ++n;
  }
  ::closedir(d);
  return n;
}

void run_dir_churn_1000(benchmark::State& state, const Env& env) {
  const std::string dir = env.scratch + "/dir_churn";
  std::vector<std::string> names;
  names.reserve(kChurnFiles);
  for (int i = 0; i < kChurnFiles; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "/f%04d", i);
    names.push_back(dir + name);
  }
  for (auto _ : state) {
    if (::mkdir(dir.c_str(), 0755) != 0) return fail_with_errno(state, "mkdir " + dir);
    for (const auto& name : names) {
      int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0) return fail_with_errno(state, "create " + name);
      ::close(fd);
    }
    int listed = count_entries(dir);
    if (listed != kChurnFiles) {
      return fail_with(state, "listing " + dir + " found " + std::to_string(listed) + " entries, not 1000");
    }
    for (const auto& name : names) {
      if (::unlink(name.c_str()) != 0) return fail_with_errno(state, "unlink " + name);
    }
    if (::rmdir(dir.c_str()) != 0) return fail_with_errno(state, "rmdir " + dir);
  }
}

}  // namespace

const Workload kOpenClose{
    .name = "open_close",
    .family = "files",
    .description = "open(O_RDONLY) and close of a 4 KiB file in the scratch directory",
    .run = run_open_close,
};

const Workload kStat{
    .name = "stat",
    .family = "files",
    .description = "stat of a file in the scratch directory",
    .run = run_stat,
};

const Workload kRead4kCached{
    .name = "read_4k_cached",
    .family = "files",
    .description = "pread of 4 KiB from a 1 MiB scratch file already in the page cache",
    .run = run_read_4k_cached,
};

const Workload kWriteFsync{
    .name = "write_fsync",
    .family = "files",
    .description = "pwrite of 4 KiB to a scratch file followed by fsync",
    .run = run_write_fsync,
};

const Workload kDirChurn1000{
    .name = "dir_churn_1000",
    .family = "files",
    .description =
        "mkdir, create 1,000 empty files, list them, unlink them, rmdir (one iteration = all of it)",
    .run = run_dir_churn_1000,
};

}  // namespace isoprobe::workloads
