#include "harness/deploy/local/local_backend.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "harness/common/error.h"
#include "harness/deploy/local/address_plan.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/image_builder.h"
#include "harness/deploy/local/sandbox_launch.h"
#include "harness/deploy/local/world.h"

namespace isoharness::deploy::local {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string kernel_release() {
  utsname u{};
  return ::uname(&u) == 0 ? u.release : "";
}

std::string first_line_of(const std::vector<std::string>& argv) {
  RunOptions opts;
  opts.deadline = 10s;
  auto r = run_command(argv, opts);
  if (!r || !r->ok()) return "unavailable";
  return r->out.substr(0, r->out.find('\n'));
}

}  // namespace

std::string default_helper_path() {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
    fs::path beside = fs::path(self).parent_path() / "isoharness-world-helper";
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  }
#ifdef ISOHARNESS_WORLD_HELPER
  if (::access(ISOHARNESS_WORLD_HELPER, X_OK) == 0) return ISOHARNESS_WORLD_HELPER;
#endif
  return "";
}


LocalBackend::LocalBackend(const json& profile, LocalOptions options)
    : profile_(parse_local_profile(profile)), options_(std::move(options)) {
  if (::geteuid() != 0) throw InfraError("the local backend needs root (namespaces, nftables, runc); run as root");
  if (options_.run_id.empty()) options_.run_id = new_run_id();
  if (!valid_run_id(options_.run_id)) throw UserError("run id must be 1-8 of [a-z0-9]: " + options_.run_id);
  if (options_.helper_path.empty()) options_.helper_path = default_helper_path();
  if (options_.helper_path.empty() || ::access(options_.helper_path.c_str(), X_OK) != 0)
    throw InfraError("isoharness-world-helper not found (build the target isoharness-world-helper)");
  for (const char* p : {"ip", "nsenter", "nft", "dnsmasq", "runc", "ssh-keygen", "sysctl"})
    if (find_program(p).empty())
      throw InfraError(std::string("the local backend needs ") + p + "; `isoharness local doctor` says how to install it");
  if (::access("/usr/sbin/sshd", X_OK) != 0) throw InfraError("the local backend needs /usr/sbin/sshd (apt-get install openssh-server)");
  paths_ = RunPaths{options_.state_root, options_.run_id};
  kernel_release_ = kernel_release();
  index_in_use_.assign(kMaxSandboxes, false);
  claim_run(paths_);
  try {
    world_ = std::make_unique<World>(paths_, WorldOptions{options_.helper_path, options_.seccomp_profile, kernel_release_});
  } catch (...) {
    world_.reset();
    cleanup_run(paths_.state_root, paths_.run_id);
    throw;
  }
}

LocalBackend::~LocalBackend() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [name, sb] : sandboxes_)
      if (sb) destroy_locked(*sb);
    sandboxes_.clear();
  }
  world_.reset();
  cleanup_run(paths_.state_root, paths_.run_id);
}

SshEndpoint LocalBackend::jump_endpoint() const {
  return SshEndpoint{world_->host_link().jump_address, 22, World::kJumpUser, world_->jump_host_key()};
}

SandboxHandle LocalBackend::deploy(const SandboxRequest& request) {
  if (!request.run_id.empty() && request.run_id != paths_.run_id)
    throw InfraError("sandbox " + request.name + ": request run id " + request.run_id + " is not this backend's run " +
                     paths_.run_id);
  if (!valid_sandbox_name(request.name))
    throw UserError("sandbox name must be 1-24 of [a-z0-9-]: " + request.name);
  std::string key_problem = check_public_key_line(request.authorized_key);
  if (!key_problem.empty()) throw UserError("sandbox " + request.name + ": authorized key: " + key_problem);
  SandboxSpec spec = parse_sandbox_values(request.values, request.item_id.empty() ? request.name : request.item_id);
  std::string runtime = runtime_for(spec, profile_);
  std::string bin = find_program(runtime);
  if (bin.empty())
    throw InfraError("runtime " + runtime + " (runtime class " + (spec.runtime_class.empty() ? "default" : spec.runtime_class) +
                     ") is not installed; the sandbox is not started and never falls back to another runtime (apt-get install " +
                     runtime + ")");
  auto nc = profile_.node_classes.find(request.node_class);
  if (nc == profile_.node_classes.end())
    throw UserError("sandbox " + request.name + ": node class `" + request.node_class +
                    "` is not in the deployment profile's node_classes");

  auto sb = std::make_unique<DeployedSandbox>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (sandboxes_.count(request.name)) throw UserError("sandbox " + request.name + " is already deployed");
    auto free = std::find(index_in_use_.begin(), index_in_use_.end(), false);
    if (free == index_in_use_.end())
      throw InfraError("the local world holds at most " + std::to_string(kMaxSandboxes) + " sandboxes at once");
    *free = true;
    sb->index = static_cast<int>(free - index_in_use_.begin());
    sb->name = request.name;
    sandboxes_[request.name] = nullptr;  // reserves the name
  }
  sb->runtime = runtime;
  sb->runtime_bin = bin;
  sb->container = container_id(paths_.run_id, request.name);
  sb->netns = netns_name(paths_.run_id, "s-" + request.name);
  sb->address = sandbox_address(sb->index);
  sb->dir = paths_.sandbox_dir(request.name);
  sb->egress = egress_for(spec, sb->index, "sb" + std::to_string(sb->index), sb->address);

  LaunchContext ctx{&paths_, world_.get(), options_.helper_path, options_.seccomp_profile, kernel_release_,
                    options_.noisy_duty_percent, static_cast<int>(options_.ssh_ready_timeout.count())};
  try {
    launch_sandbox(*sb, spec, nc->second, nc->first, request.authorized_key, ctx);
  } catch (...) {
    teardown_sandbox(*sb, ctx);
    std::lock_guard<std::mutex> lock(mutex_);
    index_in_use_[static_cast<std::size_t>(sb->index)] = false;
    sandboxes_.erase(request.name);
    throw;
  }
  sb->handle.facts["item_id"] = request.item_id;
  sb->handle.facts["attempt"] = request.attempt;
  SandboxHandle handle = sb->handle;
  std::lock_guard<std::mutex> lock(mutex_);
  sandboxes_[request.name] = std::move(sb);
  return handle;
}

void LocalBackend::destroy_locked(DeployedSandbox& sb) noexcept {
  LaunchContext ctx{&paths_, world_.get(), options_.helper_path, options_.seccomp_profile, kernel_release_,
                    options_.noisy_duty_percent, 0};
  teardown_sandbox(sb, ctx);
  if (sb.index >= 0) index_in_use_[static_cast<std::size_t>(sb.index)] = false;
}

void LocalBackend::destroy(const SandboxHandle& handle) noexcept {
  std::unique_ptr<DeployedSandbox> sb;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = sandboxes_.find(handle.name);
    if (it == sandboxes_.end() || !it->second) return;
    sb = std::move(it->second);
    sandboxes_.erase(it);
  }
  LaunchContext ctx{&paths_, world_.get(), options_.helper_path, options_.seccomp_profile, kernel_release_,
                    options_.noisy_duty_percent, 0};
  teardown_sandbox(*sb, ctx);
  std::lock_guard<std::mutex> lock(mutex_);
  if (sb->index >= 0) index_in_use_[static_cast<std::size_t>(sb->index)] = false;
}

std::vector<EgressTarget> LocalBackend::egress_targets() const { return world_targets(); }

std::vector<EgressTarget> world_targets() {
  using A = EgressTarget;
  return {
      A{"target", "target.example.com", 80, "http", "target.example.com", "internet"},
      A{"target-tls", "target.example.com", 443, "tcp", "target.example.com", "internet"},
      A{"target-addr", world_addr::kTarget, 80, "tcp", "target.example.com", "internet"},
      A{"blocked", "blocked.example.com", 80, "http", "blocked.example.com", "internet"},
      A{"blocked-addr", world_addr::kBlocked, 80, "tcp", "blocked.example.com", "internet"},
      A{"cidr-host", world_addr::kCidrHost, 80, "http", "", "internet"},
      A{"dns", "target.example.com", 53, "dns", "target.example.com", "resolver"},
      A{"resolver", world_addr::kResolver, 53, "tcp", "", "resolver"},
      A{"metadata", world_addr::kMetadata, 80, "http", "", "metadata"},
      A{"cluster-api", world_addr::kClusterApi, 443, "tcp", "kubernetes.default.svc", "cluster"},
      A{"jumphost", world_addr::kJumpNodeSide, 22, "tcp", "", "cluster"},
  };
}

json LocalBackend::context() const {
  return json{
      {"backend", "local"},
      {"run_id", paths_.run_id},
      {"state_dir", paths_.dir()},
      {"kernel", kernel_release_},
      {"runc", first_line_of({"runc", "--version"})},
      {"runsc", find_program("runsc").empty() ? "not installed" : first_line_of({"runsc", "--version"})},
      {"runsc_platform", "ptrace"},
      {"runsc_network", "host-in-netns"},
      {"oci_seccomp_inside_gvisor", false},
      {"jumphost", world_->host_link().jump_address},
      {"world_slot", world_->host_link().slot},
      {"egress_enforcement", "nftables in the node namespace"},
  };
}

std::unique_ptr<LocalBackend> make_local_backend(const json& profile, LocalOptions options) {
  return std::make_unique<LocalBackend>(profile, std::move(options));
}

}  // namespace isoharness::deploy::local
