// Checks of the filesystem posture and of the interfaces gVisor emulates (user
// namespaces, mounts, sysrq, kallsyms, debugfs): each fails on the host kernel and passes
// as "emulated" only when gVisor is observed.
#include "harness/verify/checks_internal.h"

namespace isoharness::verify::detail {

void check_filesystem(const VerifyInput& in, std::vector<CheckResult>& out) {
  const auto* fs = observation(in.posture, "filesystem");
  const std::string evidence = observation_evidence(in.posture, "filesystem");
  if (in.expect.contains("root_writable") && in.expect["root_writable"].is_boolean()) {
    bool want = in.expect["root_writable"].get<bool>();
    auto got = get_bool(fs, "root_writable");
    if (!got) {
      out.push_back(missing("root_filesystem", in.posture, "filesystem", want ? "writable" : "read-only"));
    } else {
      bool pass = *got == want;
      out.push_back(make("root_filesystem", pass, want ? "writable" : "read-only", *got ? "writable" : "read-only",
                         pass ? "as planned"
                              : (want ? "root_filesystem: / is read-only although the plan leaves it writable"
                                      : "root_filesystem: / is writable although the plan asks for readOnlyRootFilesystem"),
                         evidence));
    }
  }
  if (in.expect.contains("writable_paths") && in.expect["writable_paths"].is_array()) {
    const nlohmann::json* paths = (fs && fs->is_object() && fs->contains("paths")) ? &(*fs)["paths"] : nullptr;
    for (const auto& p : in.expect["writable_paths"]) {
      if (!p.is_string()) continue;
      std::string path = p.get<std::string>();
      auto got = get_bool(paths, path.c_str());
      if (!got) {
        out.push_back(missing("scratch:" + path, in.posture, "filesystem", "writable"));
        continue;
      }
      out.push_back(make("scratch:" + path, *got, "writable", *got ? "writable" : "not writable",
                         *got ? "scratch is writable" : "scratch: " + path + " is not writable; the task cannot write where it expects to",
                         evidence));
    }
  }
  auto cg = get_bool(fs, "cgroup_writable");
  if (!cg) {
    out.push_back(missing("cgroup_interface", in.posture, "filesystem", "not writable"));
  } else {
    out.push_back(make("cgroup_interface", !*cg, "not writable", *cg ? "writable" : "not writable",
                       *cg ? "cgroup_interface: /sys/fs/cgroup is writable from inside" : "no writable cgroup interface",
                       evidence));
  }
}

void check_emulated_interfaces(const VerifyInput& in, std::vector<CheckResult>& out) {
  const bool gvisor = observed_gvisor(in.posture);
  struct Emulated {
    const char* control;
    const char* observation;
    const char* key;
    const char* open_text;
    const char* closed_text;
  };
  // Each: on the host kernel the interface must be closed; under gVisor an open one is
  // gVisor's own emulation and never reaches the host.
  const Emulated emulated[] = {
      {"user_namespace", "userns", "created", "creation succeeds", "creation refused"},
      {"mount", "mount", "tmpfs_mounted", "a tmpfs mount succeeds", "mount refused"},
      {"sysrq", "sysrq", "opens_for_write", "/proc/sysrq-trigger opens for writing", "not writable"},
  };
  for (const auto& e : emulated) {
    const auto* obs = observation(in.posture, e.observation);
    auto open = get_bool(obs, e.key);
    if (!open) {
      out.push_back(missing(e.control, in.posture, e.observation, e.closed_text));
      continue;
    }
    std::string evidence = observation_evidence(in.posture, e.observation);
    if (!*open) {
      out.push_back(make(e.control, true, e.closed_text, e.closed_text, "closed", evidence));
    } else if (gvisor) {
      out.push_back(make(e.control, true, std::string(e.closed_text) + ", or emulated under gVisor", e.open_text,
                         "emulated: gVisor's own interface; it never reaches the host kernel", evidence));
    } else {
      out.push_back(make(e.control, false, e.closed_text, e.open_text,
                         std::string(e.control) + ": " + e.open_text + " on the host kernel", evidence));
    }
  }

  // /proc/kallsyms: gVisor shows none; on the host kernel symbols may be listed but their
  // addresses must read as zero (no CAP_SYSLOG), or the kernel's layout leaks.
  const auto* ks = observation(in.posture, "kallsyms");
  auto state = get_string(ks, "state");
  if (!state) {
    out.push_back(missing("kallsyms", in.posture, "kallsyms", gvisor ? "absent or empty" : "addresses hidden"));
  } else if (gvisor) {
    bool pass = *state == "absent" || *state == "empty";
    out.push_back(make("kallsyms", pass, "absent or empty (gVisor)", *state,
                       pass ? "gVisor exposes no host symbols" : "kallsyms: symbols visible although gVisor is observed",
                       observation_evidence(in.posture, "kallsyms")));
  } else {
    bool pass = *state != "populated";
    out.push_back(make("kallsyms", pass, "addresses hidden (zeroed, empty or absent)", *state,
                       pass ? "kernel addresses are not readable"
                            : "kallsyms: host kernel addresses are readable from the sandbox",
                       observation_evidence(in.posture, "kallsyms")));
  }

  const auto* dbg = observation(in.posture, "debugfs");
  auto present = get_bool(dbg, "present");
  auto entries = get_int(dbg, "entries").value_or(0);
  if (!present) {
    out.push_back(missing("debugfs", in.posture, "debugfs", "absent"));
  } else if (gvisor) {
    out.push_back(make("debugfs", !*present, "absent (gVisor)", *present ? "present" : "absent",
                       *present ? "debugfs: /sys/kernel/debug present although gVisor is observed" : "absent, as under gVisor"));
  } else {
    bool exposed = *present && entries > 0;
    out.push_back(make("debugfs", !exposed, "absent or empty", exposed ? "present with " + std::to_string(entries) + " entries" : (*present ? "empty mount point" : "absent"),
                       exposed ? "debugfs: the host kernel's debugfs is visible" : "host debugfs not exposed"));
  }
}

}  // namespace isoharness::verify::detail
