#include "tests/system/workloads_container.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace isoharness::workloads_test {

namespace fs = std::filesystem;

namespace {

nlohmann::json bind_mount(const std::string& from, const std::string& to) {
  return {{"destination", to},
          {"type", "bind"},
          {"source", from},
          {"options", {"rbind", "ro", "nosuid", "nodev"}}};
}

const std::vector<std::string> kCapabilities = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"};

}  // namespace

std::vector<std::string> runtime_argv(const std::string& runtime, const std::string& state_root) {
  if (runtime == "runsc") return {"runsc", "--root", state_root, "--platform=ptrace", "--network=none"};
  return {"runc", "--root", state_root};
}

std::string isoprobe_path(const std::string& binary_dir) {
  for (const char* rel : {"/probes/isoprobe-bundle/isoprobe", "/probes/isoprobe"}) {
    std::string path = binary_dir + rel;
    if (::access(path.c_str(), X_OK) == 0 && fs::is_regular_file(path)) return path;
  }
  return {};
}

OciBundle::OciBundle(std::vector<Bind> binds) : binds_(std::move(binds)) {
  std::string pattern = (fs::temp_directory_path() / "ih-wl-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
  dir_ = pattern;
  run_id_ = "ih-" + pattern.substr(pattern.size() - 6) + std::to_string(::getpid());
  fs::path rootfs = fs::path(dir_) / "rootfs";
  for (const char* sub : {"usr", "proc", "dev", "tmp", "etc"}) fs::create_directories(rootfs / sub);
  for (const char* link : {"bin", "lib", "lib64", "sbin"}) {
    fs::create_symlink(std::string("usr/") + link, rootfs / link);
  }
  for (const auto& b : binds_) fs::create_directories(rootfs / fs::path(b.container_dir).relative_path());
  std::ofstream(rootfs / "etc" / "passwd") << "root:x:0:0:root:/tmp:/bin/sh\n";
  std::ofstream(rootfs / "etc" / "group") << "root:x:0:\n";
  fs::create_directories(fs::path(dir_) / "state-runc");
  fs::create_directories(fs::path(dir_) / "state-runsc");
}

OciBundle::~OciBundle() {
  for (int i = 0; i < next_container_; ++i) {
    std::string id = run_id_ + "-wl-" + std::to_string(i);
    for (const char* runtime : {"runc", "runsc"}) {
      auto argv = runtime_argv(runtime, dir_ + "/state-" + runtime);
      argv.insert(argv.end(), {"delete", "--force", id});
      (void)run_command(argv, RunOptions{.deadline = std::chrono::seconds(20)});
    }
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void OciBundle::write_config(const std::vector<std::string>& args) const {
  nlohmann::json mounts = nlohmann::json::array({
      {{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}},
      {{"destination", "/dev"},
       {"type", "tmpfs"},
       {"source", "tmpfs"},
       {"options", {"nosuid", "strictatime", "mode=755", "size=65536k"}}},
      {{"destination", "/tmp"},
       {"type", "tmpfs"},
       {"source", "tmpfs"},
       {"options", {"nosuid", "nodev", "mode=1777", "size=262144k"}}},
      bind_mount("/usr", "/usr"),
  });
  for (const auto& b : binds_) mounts.push_back(bind_mount(b.host_dir, b.container_dir));
  nlohmann::json config = {
      {"ociVersion", "1.0.2"},
      {"process",
       {{"terminal", false},
        {"user", {{"uid", 0}, {"gid", 0}}},
        {"args", args},
        {"env", {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp"}},
        {"cwd", "/"},
        {"capabilities",
         {{"bounding", kCapabilities}, {"effective", kCapabilities}, {"permitted", kCapabilities}}},
        {"rlimits", {{{"type", "RLIMIT_NOFILE"}, {"hard", 4096}, {"soft", 4096}}}},
        {"noNewPrivileges", true}}},
      {"root", {{"path", "rootfs"}, {"readonly", true}}},
      {"hostname", "workloads"},
      {"mounts", mounts},
      {"linux",
       {{"namespaces",
         {{{"type", "pid"}},
          {{"type", "network"}},
          {{"type", "ipc"}},
          {{"type", "uts"}},
          {{"type", "mount"}}}}}},
  };
  std::ofstream out(fs::path(dir_) / "config.json");
  out << config.dump(2);
  if (!out) throw std::runtime_error("cannot write " + dir_ + "/config.json");
}

Expected<RunResult> OciBundle::run(const std::string& runtime, const std::vector<std::string>& args,
                                   std::chrono::milliseconds deadline) {
  write_config(args);
  std::string id = run_id_ + "-wl-" + std::to_string(next_container_++);
  auto argv = runtime_argv(runtime, dir_ + "/state-" + runtime);
  argv.insert(argv.end(), {"run", "--bundle", dir_, id});
  auto result = run_command(argv, RunOptions{.deadline = deadline, .max_output = 4 << 20});
  auto cleanup = runtime_argv(runtime, dir_ + "/state-" + runtime);
  cleanup.insert(cleanup.end(), {"delete", "--force", id});
  (void)run_command(cleanup, RunOptions{.deadline = std::chrono::seconds(20)});
  return result;
}

}  // namespace isoharness::workloads_test
