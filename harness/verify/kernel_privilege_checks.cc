// Checks of the syscall boundary and the process's privileges: kernel, capabilities (the
// effective set, the bounding set, the never-held ones), no_new_privs, seccomp, uid.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>

#include "harness/verify/checks_internal.h"

namespace isoharness::verify::detail {
namespace {

std::optional<unsigned long long> parse_hex(const std::optional<std::string>& text) {
  if (!text || text->empty() || text->size() > 16) return std::nullopt;
  for (char c : *text)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
  return std::strtoull(text->c_str(), nullptr, 16);
}

std::string hex16(unsigned long long v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", v);
  return buf;
}

}  // namespace

void check_kernel(const VerifyInput& in, std::vector<CheckResult>& out) {
  const auto* planned_kernel = planned(in, "kernel");
  if (!planned_kernel || !planned_kernel->is_string()) {
    out.push_back(unplanned("kernel", "kernel"));
    return;
  }
  const std::string want = planned_kernel->get<std::string>();
  const auto* k = observation(in.posture, "kernel");
  if (!k) {
    out.push_back(missing("kernel", in.posture, "kernel", want == "gvisor" ? "gVisor" : "host kernel"));
    return;
  }
  bool gvisor = get_bool(k, "gvisor").value_or(false);
  auto signals = get_strings(k, "gvisor_signals");
  std::string release = get_string(k, "release").value_or("?");
  const std::string signal_text = fmt::format("{}", fmt::join(signals, ", "));
  std::string observed = (gvisor ? "gVisor (" + signal_text + ")" : "host kernel") + ", release " + release;
  std::string evidence = observation_evidence(in.posture, "kernel");
  if (want == "gvisor") {
    bool pass = gvisor && signals.size() >= 2;
    // A gVisor sandbox has a boot id of its own; seeing the host's means the host kernel.
    bool host_boot = false;
    if (const auto* b = observation(in.posture, "boot_id")) {
      host_boot = !in.host.boot_id.empty() && get_string(b, "boot_id").value_or("") == in.host.boot_id;
    }
    if (host_boot) pass = false;
    out.push_back(make(
        "kernel", pass, "gVisor (userspace kernel, at least 2 signals)", observed,
        pass ? "syscalls are served by gVisor"
             : (host_boot ? "kernel: the sandbox shares the host's boot_id — it runs on the host kernel, "
                            "not under the gVisor the plan asks for"
                          : "kernel: the plan asks for gVisor but the sandbox runs on the host kernel"),
        evidence));
  } else {
    bool pass = !gvisor;
    out.push_back(make("kernel", pass, "host kernel (node default runtime)", observed,
                       pass ? "node default runtime, as planned"
                            : "kernel: gVisor observed where the plan names the node's default runtime",
                       evidence));
  }
}

namespace {

// The set the plan allows: cap_eff, or (null) the planned runtime's default set.
struct PlannedCaps {
  std::optional<unsigned long long> mask;
  std::string text;
};

PlannedCaps planned_caps(const VerifyInput& in, std::vector<CheckResult>& out) {
  const auto* cap_eff = planned(in, "cap_eff");
  const auto* cap_default = planned(in, "cap_eff_default");
  const auto* kernel = planned(in, "kernel");
  PlannedCaps want;
  if (cap_eff && cap_eff->is_string()) {
    want.text = cap_eff->get<std::string>();
    want.mask = parse_hex(want.text);
  } else if (cap_eff && cap_eff->is_null() && cap_default && cap_default->is_string() && kernel) {
    // Which runtime's default is judged by the plan, not by what we see.
    want.text = cap_default->get<std::string>();
    want.mask = parse_hex(want.text);
    want.text += *kernel == "gvisor" ? " (gVisor default set)" : " (containerd default set)";
  }
  if (!want.mask)
    out.push_back(unplanned("capabilities", !cap_eff ? "cap_eff" : (!kernel ? "kernel" : "cap_eff_default")));
  return want;
}

// CapEff: holding more than planned fails; holding fewer is stricter than planned (e.g. a
// login as a non-root user, whose effective set the kernel clears) and passes.
void judge_effective(const VerifyInput& in, const PlannedCaps& want, unsigned long long eff,
                     std::vector<CheckResult>& out) {
  const unsigned long long extra = eff & ~*want.mask;
  std::string reason;
  if (extra == 0 && eff == *want.mask) {
    reason = "effective capabilities are exactly the planned set";
  } else if (extra == 0) {
    reason =
        "stricter than planned: holds none beyond the plan; missing " + capability_names(*want.mask & ~eff);
  } else {
    reason = "capabilities: CapEff holds more than the plan: " + capability_names(extra);
  }
  out.push_back(make("capabilities", extra == 0, want.text, hex16(eff) + " (" + capability_names(eff) + ")",
                     reason, observation_evidence(in.posture, "capabilities")));
}

// The bounding set: the ceiling no process of the sandbox can rise above, root or a setuid
// program included. A login as a non-root user shows an empty CapEff even when the
// container was granted more; CapBnd still shows what it was granted.
void judge_bounding(const VerifyInput& in, const PlannedCaps& want, unsigned long long bnd,
                    std::vector<CheckResult>& out) {
  const unsigned long long over = bnd & ~*want.mask;
  out.push_back(make(
      "capability_bounding", over == 0, want.text + " or fewer",
      hex16(bnd) + " (" + capability_names(bnd) + ")",
      over == 0 ? "the bounding set holds nothing beyond the plan: no process of the sandbox can gain more"
                : "capability_bounding: CapBnd holds more than the plan: " + capability_names(over) +
                      " (a root process or a setuid program in the sandbox could hold them)",
      observation_evidence(in.posture, "capabilities")));
}

// Capabilities that must never be held, whatever the level: not effective, and not in the
// bounding set either.
void judge_forbidden(const VerifyInput& in, unsigned long long eff, std::optional<unsigned long long> bnd,
                     std::vector<CheckResult>& out) {
  std::vector<std::string> forbidden = {"CAP_SYS_ADMIN"};
  if (const auto* listed = planned(in, "cap_eff_forbidden"); !listed || !listed->is_array()) {
    out.push_back(unplanned("capability:forbidden", "cap_eff_forbidden"));
  } else {
    for (const auto& c : *listed)
      if (c.is_string() && c.get<std::string>() != "CAP_SYS_ADMIN") forbidden.push_back(c.get<std::string>());
  }
  for (const auto& name : forbidden) {
    const int bit = capability_bit(name);
    if (bit < 0) continue;
    const bool held = (eff >> bit) & 1ULL;
    const bool bounded = bnd && ((*bnd >> bit) & 1ULL);
    const std::string observed = held ? "held" : (bounded ? "in the bounding set" : "not held");
    const std::string reason =
        held ? "capability: " + name + " is held" + capability_escape_class(name)
        : bounded
            ? "capability: " + name + " is not effective for this login but is in the " +
                  "bounding set: a root process in the sandbox can hold it" + capability_escape_class(name)
            : name + " is not held";
    out.push_back(
        make("capability:" + name, !held && !bounded, "not held, not in the bounding set", observed, reason));
  }
}

void check_capabilities(const VerifyInput& in, std::vector<CheckResult>& out) {
  const PlannedCaps want = planned_caps(in, out);
  if (!want.mask) return;
  const auto* caps = observation(in.posture, "capabilities");
  if (!caps) {
    out.push_back(missing("capabilities", in.posture, "capabilities", want.text));
    return;
  }
  // A set isoprobe reported that cannot be parsed fails its check: unverifiable is not a pass.
  auto read_set = [&](const char* key, const std::string& control, const std::string& label) {
    auto set = parse_hex(get_string(caps, key));
    if (!set)
      out.push_back(make(control, false, want.text, "unparsable " + label,
                         control + ": " + label + " could not be read",
                         observation_evidence(in.posture, "capabilities")));
    return set;
  };
  const auto eff = read_set("eff", "capabilities", "CapEff");
  if (!eff) return;
  judge_effective(in, want, *eff, out);
  const auto bnd = read_set("bnd", "capability_bounding", "CapBnd");
  if (bnd) judge_bounding(in, want, *bnd, out);
  judge_forbidden(in, *eff, bnd, out);
}

void check_no_new_privs(const VerifyInput& in, std::vector<CheckResult>& out) {
  const auto* nnp_planned = planned(in, "no_new_privs");
  if (!nnp_planned || !nnp_planned->is_boolean()) {
    out.push_back(unplanned("no_new_privs", "no_new_privs"));
    return;
  }
  const bool want_nnp = nnp_planned->get<bool>();
  const auto got = get_bool(observation(in.posture, "no_new_privs"), nullptr);
  if (!got) {
    out.push_back(missing("no_new_privs", in.posture, "no_new_privs", want_nnp ? "set" : "not set"));
    return;
  }
  // Permitted escalation is not a promise: no_new_privs set where the plan permits
  // escalation is stricter than planned and passes.
  const bool pass = *got || !want_nnp;
  out.push_back(
      make("no_new_privs", pass,
           want_nnp ? "set (allowPrivilegeEscalation: false)" : "not required (escalation permitted)",
           *got ? "set" : "not set",
           pass ? (*got == want_nnp ? "as planned" : "stricter than planned: no_new_privs is set")
                : "no_new_privs: privilege escalation is permitted although the plan forbids it",
           observation_evidence(in.posture, "no_new_privs")));
}

// Seccomp: a filter on the host kernel; under gVisor Seccomp reads 0 because syscalls
// never reach the host kernel (runsc is itself seccomp-confined on the host side).
void check_seccomp(const VerifyInput& in, std::vector<CheckResult>& out) {
  const auto mode = get_int(observation(in.posture, "seccomp"), "status_mode");
  std::optional<std::string> state;
  if (mode) state = *mode == 2 ? "filter" : (observed_gvisor(in.posture) ? "emulated" : "off");
  judge_interface(in, {"seccomp", "seccomp", state, "mode " + std::to_string(mode.value_or(-1))}, out);
}

void check_uid(const VerifyInput& in, std::vector<CheckResult>& out) {
  const auto* uid_planned = planned(in, "uid");
  if (!uid_planned) {
    out.push_back(unplanned("uid", "uid"));
    return;
  }
  const auto uid = get_int(observation(in.posture, "identity"), "uid");
  if (!uid_planned->is_number_integer()) {
    out.push_back(
        not_applicable("uid", "the plan leaves the user to the image", std::to_string(uid.value_or(-1))));
    return;
  }
  const long long want_uid = uid_planned->get<long long>();
  if (!uid) {
    out.push_back(missing("uid", in.posture, "identity", std::to_string(want_uid)));
    return;
  }
  const bool pass = *uid == want_uid;
  out.push_back(
      make("uid", pass, std::to_string(want_uid), std::to_string(*uid),
           pass ? "runs as the planned user" : "uid: the sandbox runs as a different user than planned",
           observation_evidence(in.posture, "identity")));
}

}  // namespace

void check_privileges(const VerifyInput& in, std::vector<CheckResult>& out) {
  check_capabilities(in, out);
  check_no_new_privs(in, out);
  check_seccomp(in, out);
  check_uid(in, out);
}

}  // namespace isoharness::verify::detail
