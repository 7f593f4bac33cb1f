// kernel: uname fields, and whether the kernel is gVisor's, from several signals.
// Strong signals: gVisor's constant version string, "gVisor" in uname's release, the
// gVisor banner in the kernel log (syslog READ_ALL), /proc/sentry-meminfo. Weak ones:
// no /proc/self/attr (no LSM interface), 9p mounts (the gofer). gvisor = at least one
// strong signal and at least two in all, so no single signal decides.
#include <sys/klog.h>
#include <sys/utsname.h>

#include <cerrno>
#include <string>
#include <vector>

#include "probes/core/probe.h"
#include "probes/core/probe_support.h"
#include "probes/core/text_util.h"

namespace isoprobe {

namespace {

constexpr std::string_view kGvisorVersion = "#1 SMP Sun Jan 10 15:06:54 PST 2016";

Observation observe_kernel(Context&) {
  Observation o;
  Evidence ev;
  utsname u{};
  if (::uname(&u) != 0) return o.fail("uname failed", errno);
  ev.add("uname",
         std::string(u.sysname) + " " + u.nodename + " " + u.release + " " + u.version + " " + u.machine);
  std::vector<std::string> signals;
  int strong = 0;
  auto signal = [&](std::string name, bool is_strong) {
    signals.push_back(std::move(name));
    if (is_strong) ++strong;
  };
  if (std::string_view(u.version) == kGvisorVersion) signal("uname_version", true);
  if (std::string_view(u.release).find("gvisor") != std::string_view::npos) signal("uname_release", true);

  nlohmann::json dmesg = {{"readable", false}, {"errno", 0}};
  std::string log(std::size_t{256} * 1024, '\0');
  int n = ::klogctl(3 /* SYSLOG_ACTION_READ_ALL: reads, never clears */, log.data(),
                    static_cast<int>(log.size()));
  if (n < 0) {
    dmesg["errno"] = errno;
    ev.add("syslog(READ_ALL)", errno_name(errno));
  } else {
    log.resize(static_cast<std::size_t>(n));
    dmesg["readable"] = true;
    dmesg["bytes"] = n;
    std::size_t at = log.find("gVisor");
    if (at != std::string::npos) {
      signal("dmesg_banner", true);
      std::size_t line_start = log.rfind('\n', at);
      line_start = line_start == std::string::npos ? 0 : line_start + 1;
      ev.add("dmesg (gVisor banner)", log.substr(line_start, 400));
    } else {
      ev.add("dmesg", "no gVisor banner in " + std::to_string(n) + " bytes");
    }
  }
  int err = 0;
  if (path_exists("/proc/sentry-meminfo", &err)) signal("sentry_meminfo", true);
  if (!path_exists("/proc/self/attr", &err) && err == ENOENT) signal("no_proc_self_attr", false);
  MountTable mounts = read_mount_table();
  std::size_t ninep = 0;
  for (const auto& m : mounts.info.mounts) {
    if (m.fstype == "9p") ++ninep;
  }
  if (ninep > 0) signal("9p_mounts", false);
  ev.add("signals", std::to_string(signals.size()) + " (" + std::to_string(strong) +
                        " strong), 9p mounts: " + std::to_string(ninep));

  o.value = {{"sysname", u.sysname},
             {"release", u.release},
             {"version", u.version},
             {"machine", u.machine},
             {"gvisor", strong >= 1 && signals.size() >= 2},
             {"gvisor_signals", signals},
             {"strong_signals", strong},
             {"dmesg", dmesg}};
  o.evidence = ev.str();
  return o;
}

}  // namespace

ProbeDescriptor kernel_probe() {
  return {"kernel", "uname fields and gVisor detection from several signals", std::chrono::milliseconds(2000),
          observe_kernel};
}

}  // namespace isoprobe
