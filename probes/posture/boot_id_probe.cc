// boot_id: the kernel's boot id as this sandbox sees it; the harness compares it with
// the host's (equal = the sandbox talks to the host kernel).
#include <cerrno>

#include "probes/core/file_read.h"
#include "probes/core/probe.h"
#include "probes/core/text_util.h"

namespace isoprobe {

namespace {

Observation observe_boot_id(Context&) {
  Observation o;
  FileRead f = read_file_bounded("/proc/sys/kernel/random/boot_id", 256);
  if (f.err == ENOENT) {  // some kernels (older gVisor) do not offer it: not the host's either
    o.value = {{"boot_id", ""}, {"present", false}};
    o.evidence = "/proc/sys/kernel/random/boot_id: ENOENT";
    return o;
  }
  if (!f.ok()) {
    o.value = {{"boot_id", ""}, {"present", false}};
    return o.fail("cannot read /proc/sys/kernel/random/boot_id", f.err);
  }
  std::string id(trim(f.data));
  o.value = {{"boot_id", id}, {"present", true}};
  o.evidence = id;
  return o;
}

}  // namespace

ProbeDescriptor boot_id_probe() {
  return {"boot_id", "/proc/sys/kernel/random/boot_id", std::chrono::milliseconds(1000), observe_boot_id};
}

}  // namespace isoprobe
