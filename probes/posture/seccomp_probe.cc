// seccomp: the mode from /proc/self/status and from prctl(PR_GET_SECCOMP).
// (Under gVisor both read 0 unless runsc runs with --oci-seccomp: emulated, not a gap.)
#include <sys/prctl.h>

#include <cerrno>

#include "probes/core/file_read.h"
#include "probes/core/probe.h"
#include "probes/core/proc_status.h"
#include "probes/core/text_util.h"

namespace isoprobe {

namespace {

Observation observe_seccomp(Context&) {
  Observation o;
  FileRead f = read_file_bounded("/proc/self/status", std::size_t{64} * 1024);
  ProcStatus st = f.ok() ? parse_proc_status(f.data) : ProcStatus{};
  Evidence ev;
  for (auto line : split_lines(f.data, 200)) {
    if (line.substr(0, 7) == "Seccomp") ev.add_line(line);
  }
  // PR_GET_SECCOMP returns 0 or 2 (in strict mode the call itself would be fatal, but a
  // strict-mode process could not have started us).
  int rc = ::prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
  int err = rc < 0 ? errno : 0;
  ev.add_line("prctl(PR_GET_SECCOMP) = " + std::to_string(rc));
  o.evidence = ev.str();
  o.value = {{"status_mode", st.seccomp ? *st.seccomp : -1}, {"prctl_mode", rc}};
  if (rc < 0 && !st.seccomp) return o.fail("neither status nor prctl tell the seccomp mode", err);
  if (rc < 0) o.err = err;
  return o;
}

}  // namespace

ProbeDescriptor seccomp_probe() {
  return {"seccomp", "seccomp mode from status and prctl", std::chrono::milliseconds(1000), observe_seccomp};
}

}  // namespace isoprobe
