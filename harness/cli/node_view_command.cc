// `isoharness node-view --container [SERVICE=]ID ...`: the node agent. Run on the node that
// runs the containers (by an operator, over SSH or as a DaemonSet's process), it finds each
// container through its runtime's own state — runc's or runsc's, under the --root the
// runtime was started with — reads what this node's /proc shows of it (the same observer
// the local backend uses: harness/deploy/local/node_observer.h) and prints one
// isoharness.node-view/v1 document (docs/CONTRACTS.md §4.8) on stdout. This is what
// `isoharness check --node-view PROGRAM --node-view-arg node-view --node-view-arg …` runs.
// Exit 0 with the document, 2 on bad input, 3 when a container cannot be observed.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <set>

#include "harness/cli/commands.h"
#include "harness/common/error.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/run_state.h"
#include "harness/deploy/local/up_record.h"

namespace isoharness::cli {
namespace {

namespace dl = deploy::local;

struct NodeViewArgs {
  std::vector<std::string> containers;
  std::string runtime;       // runc, runsc; empty: both are asked
  std::string runtime_root;  // empty: every isoharness run's roots, then the runtime's default
  std::string state_dir = dl::kDefaultStateRoot;
};

// runc's rule for a container id (libcontainer: ^[\w+-\.]+$), and not an option.
bool valid_container_id(const std::string& id) {
  if (id.empty() || id.size() > 1024 || id[0] == '-' || id == "." || id == "..") return false;
  for (unsigned char c : id)
    if (!std::isalnum(c) && c != '_' && c != '+' && c != '-' && c != '.') return false;
  return true;
}

bool valid_service(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  for (unsigned char c : s)
    if (!std::isalnum(c) && c != '_' && c != '-' && c != '.') return false;
  return true;
}

void add_root(std::vector<dl::ContainerRef>& out, const dl::ContainerRef& base, const std::string& runtime,
              const std::string& runc_root, const std::string& runsc_root) {
  dl::ContainerRef ref = base;
  ref.runc_root = runtime == "runsc" ? "" : runc_root;
  ref.runsc_root = runtime == "runc" ? "" : runsc_root;
  if (!ref.runc_root.empty() || !ref.runsc_root.empty()) out.push_back(std::move(ref));
}

std::string roots_of(const std::vector<dl::ContainerRef>& refs) {
  std::string out;
  std::set<std::string> seen;
  for (const auto& r : refs)
    for (const auto& [bin, root] : {std::pair{"runc", r.runc_root}, std::pair{"runsc", r.runsc_root}})
      if (!root.empty() && seen.insert(std::string(bin) + " " + root).second)
        out += (out.empty() ? "" : ", ") + std::string(bin) + " --root " + root;
  return out;
}

int do_node_view(const NodeViewArgs& a) {
  const auto targets = node_view_targets(a.containers);
  // Each container under the first root whose runtime's state names a running process for
  // it; then the view of them all, as the local backend reads it (stamped, with the node's
  // kernel.kptr_restrict).
  std::vector<dl::ContainerRef> found;
  for (const auto& t : targets) {
    const auto candidates = node_view_candidates(t, a.runtime, a.runtime_root, a.state_dir);
    auto seen = std::find_if(candidates.begin(), candidates.end(), [](const dl::ContainerRef& ref) {
      return dl::observe_container(ref).runtime != deploy::NodeRuntime::unknown;
    });
    if (seen != candidates.end()) {
      found.push_back(*seen);
    } else {
      std::fprintf(stderr,
                   "isoharness node-view: container %s cannot be observed: no runtime's state names a "
                   "running process for it (asked: %s)\n",
                   t.id.c_str(), roots_of(candidates).c_str());
      return kExitInfrastructure;
    }
  }
  deploy::NodeView view = dl::observe_containers(found);
  for (const auto& c : view.containers)
    if (c.runtime == deploy::NodeRuntime::unknown) {
      std::fprintf(stderr, "isoharness node-view: container %s went while it was read: %s\n", c.id.c_str(),
                   c.runtime_evidence.c_str());
      return kExitInfrastructure;
    }
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  view.witness =
      std::string("node agent `isoharness node-view` on ") + host + " (its /proc and runtime state)";
  const std::string doc = deploy::write_node_view(view);
  if (doc.size() > deploy::kMaxNodeViewBytes) {
    std::fprintf(stderr,
                 "isoharness node-view: the document (%zu bytes) is larger than a reader takes (%zu)\n",
                 doc.size(), deploy::kMaxNodeViewBytes);
    return kExitInfrastructure;
  }
  std::fwrite(doc.data(), 1, doc.size(), stdout);
  std::fputc('\n', stdout);
  return std::fflush(stdout) == 0 ? kExitPass : kExitInfrastructure;
}

}  // namespace

std::vector<NodeViewTarget> node_view_targets(const std::vector<std::string>& values) {
  if (values.empty()) throw UserError("node-view: give --container [SERVICE=]ID (repeatable)");
  if (values.size() > deploy::kMaxNodeViewContainers)
    throw UserError("node-view: at most " + std::to_string(deploy::kMaxNodeViewContainers) +
                    " containers in one view");
  std::vector<NodeViewTarget> out;
  std::set<std::string> services, ids;
  for (const auto& v : values) {
    const auto eq = v.find('=');
    NodeViewTarget t;
    if (eq == std::string::npos) {
      if (!out.empty())
        throw UserError("node-view: --container " + v +
                        ": name the service of every container but the first (--container SERVICE=ID)");
      t = {"default", v};
    } else {
      t = {v.substr(0, eq), v.substr(eq + 1)};
      if (!valid_service(t.service))
        throw UserError("node-view: --container " + v + ": '" + t.service +
                        "' is not a service name ([A-Za-z0-9_.-], at most 253)");
    }
    if (!valid_container_id(t.id))
      throw UserError("node-view: --container " + v + ": '" + t.id +
                      "' is not a container id ([A-Za-z0-9_+.-], at most 1024, not starting with '-')");
    if (!services.insert(t.service).second)
      throw UserError("node-view: service " + t.service + " named twice");
    if (!ids.insert(t.id).second) throw UserError("node-view: container " + t.id + " named twice");
    out.push_back(std::move(t));
  }
  if (out.front().service != "default")
    throw UserError("node-view: the first --container is the agent's: its service is default, not " +
                    out.front().service);
  return out;
}

std::vector<dl::ContainerRef> node_view_candidates(const NodeViewTarget& target, const std::string& runtime,
                                                   const std::string& runtime_root,
                                                   const std::string& state_dir) {
  if (!runtime.empty() && runtime != "runc" && runtime != "runsc")
    throw UserError("node-view: --runtime must be runc or runsc, not '" + runtime + "'");
  if (!runtime_root.empty() && (runtime_root[0] != '/' || runtime_root.find('\n') != std::string::npos))
    throw UserError("node-view: --runtime-root must be an absolute path, not '" + runtime_root + "'");
  dl::ContainerRef base{target.id, target.service, dl::find_program("runc"), "", dl::find_program("runsc"),
                        ""};
  std::vector<dl::ContainerRef> out;
  if (!runtime_root.empty()) {
    add_root(out, base, runtime, runtime_root, runtime_root);
    return out;
  }
  for (const auto& run : dl::recorded_runs(state_dir)) {
    const auto ref = dl::run_container_ref(dl::RunPaths{state_dir, run}, target.id, target.service);
    add_root(out, base, runtime, ref.runc_root, ref.runsc_root);
  }
  add_root(out, base, runtime, "/run/runc", "/var/run/runsc");  // each runtime's own default
  return out;
}

Command node_view_command(CLI::App& app) {
  auto args = std::make_shared<NodeViewArgs>();
  CLI::App* sub = app.add_subcommand(
      "node-view",
      "The node agent: print this node's view (isoharness.node-view/v1) of running containers, each found "
      "through runc's or runsc's own state and read from this node's /proc. Run it on the node, as root. "
      "Exit 0 with the document, 2 bad input, 3 a container cannot be observed.");
  sub->add_option("--container", args->containers,
                  "[SERVICE=]ID: a container by its runtime id; the first is the agent's (service default), "
                  "each further one names its service. Repeatable")
      ->allow_extra_args(false);
  sub->add_option("--runtime", args->runtime, "Ask only this runtime's state: runc or runsc (default: both)");
  sub->add_option("--runtime-root", args->runtime_root,
                  "The --root the runtime runs the container with (default: every isoharness run's under "
                  "--state-dir, then /run/runc and /var/run/runsc)");
  sub->add_option("--state-dir", args->state_dir, "Where isoharness's local runs keep their state")
      ->capture_default_str();
  return {sub, [args]() -> int { return do_node_view(*args); }};
}

}  // namespace isoharness::cli
