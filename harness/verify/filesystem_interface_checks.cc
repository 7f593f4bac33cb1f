// Checks of the filesystem posture and of the interfaces gVisor emulates (user
// namespaces, mounts, sysrq, kallsyms, debugfs): each fails on the host kernel and passes
// as "emulated" only when gVisor is observed.
#include <optional>

#include "harness/verify/checks_internal.h"

namespace isoharness::verify::detail {

void check_filesystem(const VerifyInput& in, std::vector<CheckResult>& out) {
  const auto* fs = observation(in.posture, "filesystem");
  const std::string evidence = observation_evidence(in.posture, "filesystem");
  // readOnlyRootFilesystem is a property of the mount ("/" in the read-only mounts);
  // whether this user can create a file in "/" also depends on who owns it, so a failed
  // create with a writable mount (EACCES as uid 1000) is not a read-only root.
  auto can_write = get_bool(fs, "root_writable");
  std::optional<bool> mount_ro;
  if (fs && fs->is_object() && fs->contains("readonly_mounts") && (*fs)["readonly_mounts"].is_array()) {
    mount_ro = false;
    for (const auto& m : (*fs)["readonly_mounts"])
      if (m == "/") mount_ro = true;
  }
  if (in.expect.contains("root_read_only") && in.expect["root_read_only"].is_boolean()) {
    bool want_ro = in.expect["root_read_only"].get<bool>();
    if (!mount_ro || !can_write) {
      out.push_back(missing("root_filesystem", in.posture, "filesystem", want_ro ? "read-only" : "writable"));
    } else {
      bool ro = *mount_ro || (*can_write == false && evidence.find("EROFS") != std::string::npos);
      bool pass = ro == want_ro && !(want_ro && *can_write);
      std::string seen = ro ? "read-only mount" : (*can_write ? "writable" : "writable mount (this user may not write in /)");
      out.push_back(make("root_filesystem", pass, want_ro ? "read-only mount" : "writable mount", seen,
                         pass ? "as planned"
                              : (want_ro ? "root_filesystem: / is writable although the plan asks for readOnlyRootFilesystem"
                                         : "root_filesystem: / is mounted read-only although the plan leaves it writable"),
                         evidence));
    }
  }
  if (in.expect.contains("root_writable") && in.expect["root_writable"].is_boolean() && !in.expect.value("root_writable", true)) {
    // Whatever the reason (read-only mount, or a non-root user), "/" must not be writable.
    if (!can_write) {
      out.push_back(missing("root_not_writable", in.posture, "filesystem", "not writable by the sandbox user"));
    } else {
      out.push_back(make("root_not_writable", !*can_write, "not writable by the sandbox user",
                         *can_write ? "writable" : "not writable",
                         *can_write ? "root_not_writable: the sandbox user can create files in /" : "as planned", evidence));
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
    // Mounted counts even when this user cannot list it: a root process in the sandbox
    // could (found by `isoharness selftest`, debugfs_mounted).
    const bool mounted = get_bool(dbg, "debugfs_mounted").value_or(false);
    bool exposed = (*present && entries > 0) || mounted;
    out.push_back(make("debugfs", !exposed, "absent or empty", exposed ? "debugfs mounted, " + std::to_string(entries) + " entries listable" : (*present ? "empty mount point" : "absent"),
                       exposed ? "debugfs: the host kernel's debugfs is visible" : "host debugfs not exposed"));
  }
}

}  // namespace isoharness::verify::detail
