#include "workloads/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace isoprobe::workloads {

std::string find_in_path(std::string_view name, std::string_view path_list) {
  if (name.empty() || name.find('/') != std::string_view::npos) return {};
  std::size_t start = 0;
  while (start <= path_list.size()) {
    std::size_t end = path_list.find(':', start);
    if (end == std::string_view::npos) end = path_list.size();
    std::string_view dir = path_list.substr(start, end - start);
    start = end + 1;
    if (dir.empty() || dir.front() != '/') continue;
    std::string candidate = std::string(dir) + "/" + std::string(name);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return {};
}

std::string find_in_path(std::string_view name) {
  const char* path = std::getenv("PATH");
  return find_in_path(name, path ? std::string_view(path) : std::string_view());
}

namespace {

// Little-endian, `bytes` long; bytes past the eighth are zero (shifting a 64-bit value by
// 64 or more is undefined: UBSan found put(elf, 0, 9)).
void put(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(i < 8 ? static_cast<char>((value >> (8 * i)) & 0xff) : '\0');
}

// ELF header (64 bytes) + one PT_LOAD program header (56 bytes) + 9 bytes of code, all
// loaded read+execute at 0x400000; the entry point is the code right after the headers.
std::string tiny_exit_elf() {
  constexpr std::uint64_t kBase = 0x400000;
  constexpr std::uint64_t kHeaders = 64 + 56;
  const unsigned char code[] = {
      0xb8, 0xe7, 0x00, 0x00, 0x00,  // mov eax, 231 (exit_group)
      0x31, 0xff,                    // xor edi, edi (status 0)
      0x0f, 0x05,                    // syscall
  };
  const std::uint64_t total = kHeaders + sizeof(code);
  std::string elf;
  elf += std::string(
      "\x7f"
      "ELF",
      4);
  put(elf, 2, 1);                 // 64-bit
  put(elf, 1, 1);                 // little endian
  put(elf, 1, 1);                 // ELF version
  put(elf, 0, 9);                 // System V ABI, ABI version, padding
  put(elf, 2, 2);                 // ET_EXEC
  put(elf, 0x3e, 2);              // x86-64
  put(elf, 1, 4);                 // version
  put(elf, kBase + kHeaders, 8);  // entry
  put(elf, 64, 8);                // program header offset
  put(elf, 0, 8);                 // section header offset
  put(elf, 0, 4);                 // flags
  put(elf, 64, 2);                // ELF header size
  put(elf, 56, 2);                // program header entry size
  put(elf, 1, 2);                 // program header count
  put(elf, 64, 2);                // section header entry size
  put(elf, 0, 2);                 // section header count
  put(elf, 0, 2);                 // section name table index
  put(elf, 1, 4);                 // PT_LOAD
  put(elf, 5, 4);                 // PF_R | PF_X
  put(elf, 0, 8);                 // file offset
  put(elf, kBase, 8);             // virtual address
  put(elf, kBase, 8);             // physical address
  put(elf, total, 8);             // size in file
  put(elf, total, 8);             // size in memory
  put(elf, 0x1000, 8);            // alignment
  elf.append(reinterpret_cast<const char*>(code), sizeof(code));
  return elf;
}

}  // namespace

std::optional<std::string> write_tiny_exit_program(const std::string& path) {
  std::string elf = tiny_exit_elf();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  if (fd < 0) return "open " + path + ": " + std::strerror(errno);
  ssize_t written = ::write(fd, elf.data(), elf.size());
  int saved = errno;
  ::close(fd);
  if (written != static_cast<ssize_t>(elf.size())) {
    return "write " + path + ": " + (written < 0 ? std::strerror(saved) : "short write");
  }
  return std::nullopt;
}

ChildRunner::ChildRunner(std::chrono::milliseconds limit) : limit_(limit), watchdog_([this] { watch(); }) {}

ChildRunner::~ChildRunner() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  watchdog_.join();
}

void ChildRunner::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_; });
    if (current_ > 0 && !killed_ && std::chrono::steady_clock::now() > deadline_) {
      ::kill(current_, SIGKILL);  // still unreaped (WNOWAIT), so the pid is still ours
      killed_ = true;
    }
  }
}

std::optional<std::string> ChildRunner::run(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/') return "program path is not absolute";
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  // isoprobe ignores SIGPIPE for its own round trips; the child gets the default back.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return "cannot start " + argv[0] + ": " + std::strerror(rc);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    current_ = pid;
    deadline_ = std::chrono::steady_clock::now() + limit_;
    killed_ = false;
  }
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
  }
  bool killed = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    current_ = 0;
    killed = killed_;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (killed) {
    return argv[0] + " did not finish within " + std::to_string(limit_.count()) + " ms (killed)";
  }
  if (WIFSIGNALED(status)) return argv[0] + " was killed by signal " + std::to_string(WTERMSIG(status));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return argv[0] + " exited with status " + std::to_string(WEXITSTATUS(status));
  }
  return std::nullopt;
}

}  // namespace isoprobe::workloads
