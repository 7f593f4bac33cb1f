// sysrq: is /proc/sysrq-trigger there, and does it open for writing? We open and close
// it only: not one byte is ever written (under runc it is the host kernel's trigger).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "probes/core/file_read.h"
#include "probes/core/probe.h"
#include "probes/core/probe_support.h"
#include "probes/core/text_util.h"

namespace isoprobe {

namespace {

Observation observe_sysrq(Context&) {
  Observation o;
  int err = 0;
  bool present = path_exists("/proc/sysrq-trigger", &err);
  Evidence ev;
  bool opens = false;
  int open_err = 0;
  if (present) {
    int fd = ::open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd >= 0) {
      opens = true;
      ::close(fd);
    } else {
      open_err = errno;
    }
    ev.add_line(std::string("open(O_WRONLY): ") +
                (opens ? "opened, closed unwritten" : errno_name(open_err)));
  } else {
    ev.add_line("/proc/sysrq-trigger: " + errno_name(err));
  }
  FileRead mask = read_file_bounded("/proc/sys/kernel/sysrq", 64);
  if (mask.ok()) ev.add_line("/proc/sys/kernel/sysrq: " + std::string(trim(mask.data)));
  o.value = {{"present", present}, {"opens_for_write", opens}, {"open_errno", open_err}};
  o.evidence = ev.str();
  return o;
}

}  // namespace

ProbeDescriptor sysrq_probe() {
  return {"sysrq", "/proc/sysrq-trigger present and openable for write (never written)",
          std::chrono::milliseconds(1000), observe_sysrq};
}

}  // namespace isoprobe
