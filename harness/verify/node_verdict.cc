// The node verdict rule (docs/CONTRACTS.md §4.8): a posture check passes only when the
// sandbox's report and the node's view both agree with the plan. The one table below says,
// per posture check, what the node sees and whether it agrees; apply_node_rule combines it
// with the sandbox's verdict, once, for every check.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "harness/common/capability_table.h"
#include "harness/verify/checks_internal.h"

namespace isoharness::verify::detail {
namespace {

using deploy::NodeContainer;
using deploy::NodeRuntime;

enum class NodeSays { agrees, disagrees, absent, cannot_see };

struct NodeJudgement {
  NodeSays says = NodeSays::absent;
  std::string seen;  // what the node sees, for people ("00000000a80425fb on its init process")
};

NodeJudgement node_agrees(std::string seen) {
  return {NodeSays::agrees, std::move(seen)};
}
NodeJudgement node_disagrees(std::string seen) {
  return {NodeSays::disagrees, std::move(seen)};
}
NodeJudgement node_absent(std::string what) {
  return {NodeSays::absent, std::move(what)};
}
NodeJudgement node_cannot_see(std::string why) {
  return {NodeSays::cannot_see, std::move(why)};
}
NodeJudgement node_verdict_of(bool agree, std::string seen) {
  return agree ? node_agrees(std::move(seen)) : node_disagrees(std::move(seen));
}

std::string node_hex16(unsigned long long v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", v);
  return buf;
}

bool is_gvisor(const NodeContainer& c) {
  return c.runtime == NodeRuntime::runsc;
}

// Where the node read the process's facts, for people.
std::string on_what(const NodeContainer& c) {
  return is_gvisor(c) ? "in the spec runsc was handed" : "on its init process";
}

std::optional<unsigned long long> hex_plan(const nlohmann::json* v) {
  if (!v || !v->is_string()) return std::nullopt;
  const auto& s = v->get_ref<const std::string&>();
  if (s.empty() || s.size() > 16 || s.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    return std::nullopt;
  return std::stoull(s, nullptr, 16);
}

// The set the plan allows (cap_eff, or the planned runtime's default set when cap_eff is null).
std::optional<unsigned long long> planned_mask(const VerifyInput& in) {
  const auto* eff = planned(in, "cap_eff");
  if (eff && eff->is_string()) return hex_plan(eff);
  if (eff && eff->is_null()) return hex_plan(planned(in, "cap_eff_default"));
  return std::nullopt;
}

constexpr int kCapNetRaw = 13;

// A set the node read; under gVisor the spec's set less CAP_NET_RAW, which runsc removes
// unless it runs with --net-raw.
std::optional<unsigned long long> node_set(const NodeContainer& c, const std::optional<std::uint64_t>& set) {
  if (!set) return std::nullopt;
  unsigned long long v = *set;
  if (is_gvisor(c) && !(c.gvisor && c.gvisor->net_raw.value_or(false))) v &= ~(1ULL << kCapNetRaw);
  return v;
}

NodeJudgement node_capabilities(const VerifyInput& in, const NodeContainer& c, bool bounding) {
  const auto want = planned_mask(in);
  const auto set = node_set(c, bounding ? c.process.cap_bnd : c.process.cap_eff);
  if (!want) return node_absent("the plan's capability set");
  if (!set) return node_absent(bounding ? "CapBnd" : "CapEff");
  const unsigned long long extra = *set & ~*want;
  return node_verdict_of(
      extra == 0, fmt::format("{} {} {}{}", bounding ? "CapBnd" : "CapEff", node_hex16(*set), on_what(c),
                              extra ? " (beyond the plan: " + capability_names(extra) + ")" : ""));
}

NodeJudgement node_capability(const std::string& name, const NodeContainer& c) {
  const int bit = capability_bit(name);
  const auto eff = node_set(c, c.process.cap_eff), bnd = node_set(c, c.process.cap_bnd);
  if (bit < 0) return node_cannot_see("no capability of that name");
  if (!eff || !bnd) return node_absent("CapEff and CapBnd");
  const bool held = ((*eff >> bit) & 1ULL) || ((*bnd >> bit) & 1ULL);
  return node_verdict_of(!held, name + (held ? " in CapEff or CapBnd " : " not held ") + on_what(c));
}

NodeJudgement node_no_new_privs(const VerifyInput& in, const NodeContainer& c) {
  const auto* want = planned(in, "no_new_privs");
  if (!c.process.no_new_privs) return node_absent("NoNewPrivs");
  const bool set = *c.process.no_new_privs;
  const bool need = want && want->is_boolean() && want->get<bool>();
  return node_verdict_of(set || !need, std::string("NoNewPrivs ") + (set ? "1 " : "0 ") + on_what(c));
}

NodeJudgement node_seccomp(const VerifyInput& in, const NodeContainer& c) {
  if (!c.process.seccomp_mode) return node_absent("Seccomp");
  const int mode = *c.process.seccomp_mode;
  std::string state = mode == 2 ? "filter" : (is_gvisor(c) ? "emulated" : "off");
  // Under gVisor the filter that keeps syscalls from the host kernel is the sentry's own.
  if (is_gvisor(c) && (!c.gvisor || !c.gvisor->sentry.seccomp_mode))
    return node_absent("the sentry's Seccomp");
  if (is_gvisor(c) && *c.gvisor->sentry.seccomp_mode != 2) state = "off";
  const auto* accepted = planned(in, "seccomp");
  bool ok = false;
  if (accepted && accepted->is_array())
    for (const auto& s : *accepted) ok = ok || (s.is_string() && s.get<std::string>() == state);
  std::string seen = fmt::format("Seccomp {} ({}) {}", mode, state, on_what(c));
  if (is_gvisor(c) && c.gvisor)
    seen += fmt::format(", sentry Seccomp {}", c.gvisor->sentry.seccomp_mode.value_or(-1));
  return node_verdict_of(ok, seen);
}

NodeJudgement node_uid(const VerifyInput& in, const NodeContainer& c) {
  const auto* want = planned(in, "uid");
  if (!want || !want->is_number_integer()) return node_cannot_see("the plan names no uid");
  if (!c.process.uid) return node_absent("the uid");
  return node_verdict_of(*c.process.uid == want->get<long long>(),
                         fmt::format("uid {} {}", *c.process.uid, on_what(c)));
}

NodeJudgement node_kernel(const VerifyInput& in, const NodeContainer& c) {
  const auto* want = planned(in, "kernel");
  if (c.runtime == NodeRuntime::unknown) return node_absent("the runtime (" + c.runtime_evidence + ")");
  const bool want_gvisor = want && want->is_string() && want->get<std::string>() == "gvisor";
  return node_verdict_of(want_gvisor == is_gvisor(c),
                         std::string(deploy::node_runtime_name(c.runtime)) + " (" + c.runtime_evidence + ")");
}

std::string node_listed(const std::vector<std::string>& names) {
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

// A list the node read: agrees when empty (or every entry is allowed).
NodeJudgement node_list(const std::optional<std::vector<std::string>>& list, const char* what,
                        const std::vector<std::string>& allowed = {}) {
  if (!list) return node_absent(what);
  std::vector<std::string> extra;
  for (const auto& e : *list)
    if (std::find(allowed.begin(), allowed.end(), e) == allowed.end()) extra.push_back(e);
  return node_verdict_of(extra.empty(), std::string(what) + ": " + node_listed(extra));
}

NodeJudgement node_root(const VerifyInput& in, const NodeContainer& c) {
  const auto* want = planned(in, "root_read_only");
  if (!c.filesystem.root_read_only) return node_absent("the root mount");
  const bool ro = *c.filesystem.root_read_only;
  const bool need = want && want->is_boolean() && want->get<bool>();
  return node_verdict_of(ro || !need, std::string("root mount ") + (ro ? "read-only" : "writable") +
                                          (is_gvisor(c) ? " in the spec" : " in its mountinfo"));
}

NodeJudgement node_host_paths(const VerifyInput& in, const NodeContainer& c) {
  std::vector<std::string> allowed;
  if (const auto* a = planned(in, "host_mounts_allowed"); a && a->is_array())
    for (const auto& v : *a)
      if (v.is_string()) allowed.push_back(v.get<std::string>());
  return node_list(c.filesystem.host_paths, "node paths mounted beyond the plan", allowed);
}

NodeJudgement node_pid_namespace(const NodeContainer& c) {
  if (is_gvisor(c)) {
    if (!c.gvisor || !c.gvisor->processes_hidden) return node_absent("the sandbox's host processes");
    return node_verdict_of(*c.gvisor->processes_hidden,
                           *c.gvisor->processes_hidden
                               ? "only runsc's own processes on the host"
                               : "host processes of the sandbox: " + node_listed(c.gvisor->host_processes));
  }
  if (!c.process.shares_node.pid) return node_absent("the PID namespace");
  return node_verdict_of(!*c.process.shares_node.pid,
                         *c.process.shares_node.pid ? "the node's PID namespace" : "its own PID namespace");
}

NodeJudgement node_host_namespaces(const NodeContainer& c) {
  const auto& ns = c.process.shares_node;
  // gVisor's sentry serves a hostname of its own whatever the spec; its network is the
  // sentry's namespace on the host.
  if (!ns.net || (!is_gvisor(c) && !ns.uts)) return node_absent("the UTS and network namespaces");
  const bool uts = !is_gvisor(c) && *ns.uts;
  std::vector<std::string> shared;
  if (uts) shared.push_back("UTS");
  if (*ns.net) shared.push_back("network");
  return node_verdict_of(shared.empty(), shared.empty() ? "its own UTS and network namespaces"
                                                        : "the node's " + node_listed(shared) + " namespace");
}

NodeJudgement node_tokens(const VerifyInput& in, const NodeContainer& c) {
  if (in.level != policy::Level::strict) return node_cannot_see("required absent under strict only");
  return node_list(c.filesystem.service_account_tokens, "service-account token mounts");
}

NodeJudgement node_flag(const std::optional<bool>& open, const char* open_text, const char* closed_text) {
  if (!open) return node_absent(open_text);
  return node_verdict_of(!*open, *open ? open_text : closed_text);
}

// The states the plan accepts under `control`, and whether `state` is one.
bool accepted_state(const VerifyInput& in, const char* control, const std::string& state) {
  const auto* accepted = planned(in, control);
  if (!accepted || !accepted->is_array()) return false;
  return std::any_of(accepted->begin(), accepted->end(),
                     [&](const nlohmann::json& s) { return s.is_string() && s.get<std::string>() == state; });
}

NodeJudgement node_state(const VerifyInput& in, const char* control, bool open, const char* open_state,
                         const NodeContainer& c, const std::string& seen) {
  const std::string state = !open ? "read_only" : (is_gvisor(c) ? "emulated" : open_state);
  return node_verdict_of(accepted_state(in, control, state), seen + " (" + state + ")");
}

bool listed_in(const std::optional<std::vector<std::string>>& list, const std::string& path) {
  return list && std::find(list->begin(), list->end(), path) != list->end();
}

constexpr const char* kSentryServes =
    "what the gVisor sentry serves inside the sandbox is its own; the node cannot see it";

NodeJudgement node_sysrq(const VerifyInput& in, const NodeContainer& c) {
  if (is_gvisor(c)) return node_cannot_see(kSentryServes);
  if (c.filesystem.sysrq_present == false) return node_agrees("no /proc/sysrq-trigger in the node's kernel");
  if (!c.filesystem.read_only_paths || !c.filesystem.masked_paths) return node_absent("the /proc mounts");
  const bool closed = listed_in(c.filesystem.read_only_paths, "/proc/sysrq-trigger") ||
                      listed_in(c.filesystem.masked_paths, "/proc/sysrq-trigger");
  const std::string state = closed ? "refused" : "writable";
  return node_verdict_of(accepted_state(in, "sysrq", state),
                         std::string("/proc/sysrq-trigger ") +
                             (closed ? "on a read-only or masking mount" : "on a writable /proc"));
}

NodeJudgement node_kallsyms(const VerifyInput& in, const NodeContainer& c) {
  (void)in;
  if (is_gvisor(c)) return node_cannot_see(kSentryServes);
  if (listed_in(c.filesystem.masked_paths, "/proc/kallsyms")) return node_agrees("/proc/kallsyms masked");
  const auto bnd = c.process.cap_bnd;
  if (!bnd || !c.kptr_restrict) return node_absent("CapBnd and the node's kptr_restrict");
  const bool syslog = (*bnd >> capability_bit("CAP_SYSLOG")) & 1ULL;
  const bool leaks = syslog && *c.kptr_restrict < 2;
  return node_verdict_of(
      !leaks, fmt::format("CAP_SYSLOG {} {}, the node's kptr_restrict {}", syslog ? "in CapBnd" : "not held",
                          on_what(c), *c.kptr_restrict));
}

NodeJudgement node_debugfs(const NodeContainer& c) {
  if (is_gvisor(c)) return node_cannot_see(kSentryServes);
  return node_flag(c.filesystem.debugfs_mounted, "debugfs mounted in its mountinfo", "no debugfs mount");
}

NodeJudgement node_proc_sys(const VerifyInput& in, const NodeContainer& c) {
  if (is_gvisor(c)) return node_cannot_see(kSentryServes);
  if (!c.filesystem.proc_sys_read_only) return node_absent("the /proc/sys mount");
  const bool open = !*c.filesystem.proc_sys_read_only;
  return node_state(in, "proc_sys", open, "writable", c,
                    open ? "/proc/sys on a writable mount" : "/proc/sys read-only");
}

NodeJudgement node_cgroup_mounts(const VerifyInput& in, const NodeContainer& c) {
  if (!c.filesystem.cgroup_writable) return node_absent("the cgroup mounts");
  const bool open = *c.filesystem.cgroup_writable;
  return node_state(in, "cgroup_mounts", open, "writable", c,
                    open ? "a writable cgroup mount" : "cgroup mounts read-only");
}

// What the sandbox tried itself (a tmpfs mount, unshare, bpf(2), a raw socket, a write):
// the outcome of a try inside is not a fact the node can read. The node judges what
// decides it (the capabilities, the seccomp mode, the mounts: each its own check); the
// try's outcome is kept under this label, never silently. "" for a control that is no try.
const char* try_inside(const std::string& control) {
  if (control == "mount") return "a mount(2) the sandbox tried; the node judges CAP_SYS_ADMIN and seccomp";
  if (control == "user_namespace")
    return "an unshare(CLONE_NEWUSER) the sandbox tried; the node judges seccomp and the capabilities";
  if (control == "bpf")
    return "a bpf(2) the sandbox tried; the node judges CAP_BPF, CAP_SYS_ADMIN and seccomp";
  if (control == "raw_sockets") return "a raw socket the sandbox tried to open; the node judges CAP_NET_RAW";
  if (control == "root_not_writable") return "a write to / the sandbox tried; the node judges the root mount";
  if (control.rfind("scratch:", 0) == 0) return "a write the sandbox tried in its scratch directory";
  return "";
}

// The table: which posture check the node judges, and how. A check not here is not a
// fact of the node (egress has its own witnesses); a try inside is named (try_inside).
NodeJudgement node_judgement(const VerifyInput& in, const std::string& control, const NodeContainer& c) {
  if (const char* why = try_inside(control); *why) return node_cannot_see(why);
  if (control == "kernel") return node_kernel(in, c);
  if (control == "capabilities") return node_capabilities(in, c, false);
  if (control == "capability_bounding") return node_capabilities(in, c, true);
  if (control.rfind("capability:", 0) == 0) return node_capability(control.substr(11), c);
  if (control == "no_new_privs") return node_no_new_privs(in, c);
  if (control == "seccomp") return node_seccomp(in, c);
  if (control == "uid") return node_uid(in, c);
  if (control == "root_filesystem") return node_root(in, c);
  if (control == "host_devices") return node_list(c.devices, "devices beyond the standard set");
  if (control == "runtime_socket") return node_list(c.filesystem.runtime_sockets, "runtime sockets mounted");
  if (control == "pid_namespace") return node_pid_namespace(c);
  if (control == "host_namespaces") return node_host_namespaces(c);
  if (control == "host_path_mount") return node_host_paths(in, c);
  if (control == "kubernetes_credentials") return node_tokens(in, c);
  if (control == "cgroup_interface")
    return node_flag(c.filesystem.cgroup_writable, "a writable cgroup mount", "cgroup mounts read-only");
  if (control == "cgroup_mounts") return node_cgroup_mounts(in, c);
  if (control == "proc_sys") return node_proc_sys(in, c);
  if (control == "sysrq") return node_sysrq(in, c);
  if (control == "kallsyms") return node_kallsyms(in, c);
  if (control == "debugfs") return node_debugfs(c);
  return node_absent("this fact");  // unreachable: node_fact() lists exactly the controls above
}

// The posture checks the table above judges.
bool node_fact(const std::string& control) {
  static const std::set<std::string> kControls = {"kernel",
                                                  "capabilities",
                                                  "capability_bounding",
                                                  "no_new_privs",
                                                  "seccomp",
                                                  "uid",
                                                  "root_filesystem",
                                                  "host_devices",
                                                  "runtime_socket",
                                                  "pid_namespace",
                                                  "host_namespaces",
                                                  "host_path_mount",
                                                  "kubernetes_credentials",
                                                  "cgroup_interface",
                                                  "cgroup_mounts",
                                                  "proc_sys",
                                                  "sysrq",
                                                  "kallsyms",
                                                  "debugfs"};
  return kControls.count(control) > 0 || control.rfind("capability:", 0) == 0 || *try_inside(control);
}

void add_judge(CheckResult& check, Judge j) {
  if (std::find(check.judges.begin(), check.judges.end(), j) == check.judges.end()) check.judges.push_back(j);
}

// Why the node's view cannot be judged on, or "" when it can.
std::string view_problem(const VerifyInput& in, const NodeContainer*& agent) {
  agent = nullptr;
  if (!in.node_view) return "there is no node view of this sandbox";
  if (!in.node_view->complete)
    return "the node view is incomplete" +
           (in.node_view->note.empty() ? "" : " (" + in.node_view->note + ")");
  agent = deploy::node_container(*in.node_view);
  if (!agent) return "the node view has no container for the agent's service";
  return "";
}

void combine(const VerifyInput& in, const NodeContainer* agent, const std::string& problem,
             CheckResult& check) {
  if (!node_fact(check.control)) return;
  if (in.node_view_waived) {
    check.self_reported = true;
    if (check.status == CheckStatus::pass)
      check.reason += " (self-reported: the deployment profile says node_view: none)";
    return;
  }
  const NodeJudgement node = agent ? node_judgement(in, check.control, *agent) : node_absent(problem);
  switch (node.says) {
    case NodeSays::cannot_see:
      if (check.status == CheckStatus::pass)
        check.reason += " (node cannot see: " + node.seen + "; the sandbox's word)";
      return;
    case NodeSays::agrees:
      if (check.status == CheckStatus::pass) add_judge(check, Judge::node);
      return;
    case NodeSays::disagrees:
      check.reason = fmt::format("{}: the sandbox reports {}; the node sees {}", check.control,
                                 check.observed, node.seen) +
                     (check.status == CheckStatus::pass ? "" : " (" + check.reason + ")");
      if (check.status == CheckStatus::pass) check.judges.clear();
      check.status = CheckStatus::fail;
      add_judge(check, Judge::node);
      return;
    case NodeSays::absent:
      if (check.status != CheckStatus::pass) return;  // the sandbox's own word against itself stands
      check.status = CheckStatus::unwitnessed;
      check.judges.clear();
      check.reason = fmt::format("{}: the sandbox reports {}, but the node's view cannot say: {}",
                                 check.control, check.observed, agent ? "it has no " + node.seen : problem);
      return;
  }
}

}  // namespace

void apply_node_rule(const VerifyInput& in, std::vector<CheckResult>& out) {
  const NodeContainer* agent = nullptr;
  const std::string problem = view_problem(in, agent);
  for (auto& check : out) {
    if (check.status == CheckStatus::na || check.control.rfind("egress:", 0) == 0) continue;
    combine(in, agent, problem, check);
  }
}

bool node_judges(const std::string& control) {
  return node_fact(control);
}

}  // namespace isoharness::verify::detail

namespace isoharness::verify {
bool node_judged(const std::string& control) {
  return detail::node_judges(control);
}
}  // namespace isoharness::verify
