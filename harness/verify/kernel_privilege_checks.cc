// Checks of the syscall boundary and the process's privileges: kernel, capabilities,
// no_new_privs, seccomp, uid.
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
  const std::string want = in.expect.value("kernel", std::string("host"));
  const auto* k = observation(in.posture, "kernel");
  if (!k) {
    out.push_back(missing("kernel", in.posture, "kernel", want == "gvisor" ? "gVisor" : "host kernel"));
    return;
  }
  bool gvisor = get_bool(k, "gvisor").value_or(false);
  auto signals = get_strings(k, "gvisor_signals");
  std::string release = get_string(k, "release").value_or("?");
  std::string signal_text;
  for (const auto& s : signals) signal_text += (signal_text.empty() ? "" : ", ") + s;
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

void check_privileges(const VerifyInput& in, std::vector<CheckResult>& out) {
  const bool gvisor = observed_gvisor(in.posture);
  // Capabilities.
  const auto* caps = observation(in.posture, "capabilities");
  std::string want_text;
  std::optional<unsigned long long> want;
  if (in.expect.contains("cap_eff") && in.expect["cap_eff"].is_string()) {
    want = parse_hex(in.expect["cap_eff"].get<std::string>());
    want_text = in.expect["cap_eff"].get<std::string>();
  } else {
    // The runtime's default set: which runtime is judged by the plan, not by what we see.
    bool planned_gvisor = in.expect.value("kernel", std::string("host")) == "gvisor";
    want_text = planned_gvisor ? kGvisorDefaultCapEff : kRuncDefaultCapEff;
    want = parse_hex(want_text);
    want_text += planned_gvisor ? " (gVisor default set)" : " (containerd default set)";
  }
  if (!caps) {
    out.push_back(missing("capabilities", in.posture, "capabilities", want_text));
  } else {
    // A set isoprobe reported that cannot be parsed fails its check: unverifiable is not a pass.
    auto read_set = [&](const char* key, const std::string& control, const std::string& label) {
      auto set = parse_hex(get_string(caps, key));
      if (!set)
        out.push_back(make(control, false, want_text, "unparsable " + label,
                           control + ": " + label + " could not be read",
                           observation_evidence(in.posture, "capabilities")));
      return set;
    };
    auto eff = read_set("eff", "capabilities", "CapEff");
    if (eff) {
      // Holding more than planned fails; holding fewer is stricter than planned (e.g. a
      // login as a non-root user, whose effective set the kernel clears) and passes.
      unsigned long long extra = want ? (*eff & ~*want) : *eff;
      bool pass = want && extra == 0;
      std::string reason;
      if (pass && *eff == *want) {
        reason = "effective capabilities are exactly the planned set";
      } else if (pass) {
        reason =
            "stricter than planned: holds none beyond the plan; missing " + capability_names(*want & ~*eff);
      } else {
        reason = "capabilities: CapEff holds more than the plan: " + capability_names(extra);
      }
      out.push_back(make("capabilities", pass, want_text, hex16(*eff) + " (" + capability_names(*eff) + ")",
                         reason, observation_evidence(in.posture, "capabilities")));
      // The bounding set: the ceiling no process of the sandbox can rise above, root or a
      // setuid program included. A login as a non-root user shows an empty CapEff even
      // when the container was granted more; CapBnd still shows what it was granted.
      auto bnd = read_set("bnd", "capability_bounding", "CapBnd");
      if (bnd) {
        unsigned long long over = want ? (*bnd & ~*want) : *bnd;
        bool ok = want && over == 0;
        out.push_back(make(
            "capability_bounding", ok, want_text + " or fewer",
            hex16(*bnd) + " (" + capability_names(*bnd) + ")",
            ok ? "the bounding set holds nothing beyond the plan: no process of the sandbox can gain more"
               : "capability_bounding: CapBnd holds more than the plan: " + capability_names(over) +
                     " (a root process or a setuid program in the sandbox could hold them)",
            observation_evidence(in.posture, "capabilities")));
      }
      // Capabilities that must never be held, whatever the level: not effective, and not
      // in the bounding set either.
      std::vector<std::string> forbidden = {"CAP_SYS_ADMIN"};
      if (in.expect.contains("cap_eff_forbidden") && in.expect["cap_eff_forbidden"].is_array()) {
        for (const auto& c : in.expect["cap_eff_forbidden"])
          if (c.is_string() && c.get<std::string>() != "CAP_SYS_ADMIN")
            forbidden.push_back(c.get<std::string>());
      }
      for (const auto& name : forbidden) {
        int bit = capability_bit(name);
        if (bit < 0) continue;
        const bool held = (*eff >> bit) & 1ULL;
        const bool bounded = bnd && ((*bnd >> bit) & 1ULL);
        std::string observed = held ? "held" : (bounded ? "in the bounding set" : "not held");
        std::string reason =
            held      ? "capability: " + name + " is held — the capability most container escapes need"
            : bounded ? "capability: " + name + " is not effective for this login but is in the " +
                            "bounding set: a root process in the sandbox can hold it"
                      : name + " is not held";
        out.push_back(make("capability:" + name, !held && !bounded, "not held, not in the bounding set",
                           observed, reason));
      }
    }
  }

  // no_new_privs.
  if (in.expect.contains("no_new_privs") && in.expect["no_new_privs"].is_boolean()) {
    bool want_nnp = in.expect["no_new_privs"].get<bool>();
    const auto* nnp = observation(in.posture, "no_new_privs");
    auto got = get_bool(nnp, nullptr);
    if (!got) {
      out.push_back(missing("no_new_privs", in.posture, "no_new_privs", want_nnp ? "set" : "not set"));
    } else {
      // Permitted escalation is not a promise: no_new_privs set where the plan permits
      // escalation is stricter than planned and passes.
      bool pass = *got || !want_nnp;
      out.push_back(
          make("no_new_privs", pass,
               want_nnp ? "set (allowPrivilegeEscalation: false)" : "not required (escalation permitted)",
               *got ? "set" : "not set",
               pass ? (*got == want_nnp ? "as planned" : "stricter than planned: no_new_privs is set")
                    : "no_new_privs: privilege escalation is permitted although the plan forbids it",
               observation_evidence(in.posture, "no_new_privs")));
    }
  }

  // Seccomp: a filter under runc; under gVisor Seccomp reads 0 because syscalls never reach
  // the host kernel (runsc is itself seccomp-confined on the host side).
  const auto* sc = observation(in.posture, "seccomp");
  auto mode = get_int(sc, "status_mode");
  if (!mode) {
    out.push_back(missing("seccomp", in.posture, "seccomp", "filter (mode 2)"));
  } else if (gvisor) {
    out.push_back(make("seccomp", true, "filter, or emulated under gVisor", "mode " + std::to_string(*mode),
                       *mode == 2 ? "a filter is active inside gVisor"
                                  : "emulated: under gVisor syscalls never reach the host kernel; runsc is "
                                    "seccomp-confined on the host",
                       observation_evidence(in.posture, "seccomp")));
  } else {
    bool pass = *mode == 2;
    out.push_back(make("seccomp", pass, "filter (mode 2)", "mode " + std::to_string(*mode),
                       pass ? "a seccomp filter is active" : "seccomp: no filter active on the host kernel",
                       observation_evidence(in.posture, "seccomp")));
  }

  // uid.
  if (in.expect.contains("uid") && in.expect["uid"].is_number_integer()) {
    long long want_uid = in.expect["uid"].get<long long>();
    const auto* id = observation(in.posture, "identity");
    auto uid = get_int(id, "uid");
    if (!uid) {
      out.push_back(missing("uid", in.posture, "identity", std::to_string(want_uid)));
    } else {
      bool pass = *uid == want_uid;
      out.push_back(
          make("uid", pass, std::to_string(want_uid), std::to_string(*uid),
               pass ? "runs as the planned user" : "uid: the sandbox runs as a different user than planned",
               observation_evidence(in.posture, "identity")));
    }
  } else {
    out.push_back(
        not_applicable("uid", "the plan leaves the user to the image",
                       std::to_string(get_int(observation(in.posture, "identity"), "uid").value_or(-1))));
  }
}

}  // namespace isoharness::verify::detail
