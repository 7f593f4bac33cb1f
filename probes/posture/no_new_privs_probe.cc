// no_new_privs: prctl(PR_GET_NO_NEW_PRIVS), cross-checked with NoNewPrivs in status.
#include <sys/prctl.h>

#include <cerrno>

#include "probes/core/file_read.h"
#include "probes/core/probe.h"
#include "probes/core/proc_status.h"

namespace isoprobe {

namespace {

Observation observe_no_new_privs(Context&) {
  Observation o;
  int rc = ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
  int prctl_err = rc < 0 ? errno : 0;
  FileRead f = read_file_bounded("/proc/self/status", std::size_t{64} * 1024);
  ProcStatus st = f.ok() ? parse_proc_status(f.data) : ProcStatus{};
  std::string status_text = st.no_new_privs ? std::to_string(*st.no_new_privs) : "absent";
  o.evidence = "prctl(PR_GET_NO_NEW_PRIVS) = " + std::to_string(rc) + "; status NoNewPrivs: " + status_text;
  if (rc >= 0) {
    o.value = rc == 1;
  } else if (st.no_new_privs) {
    o.value = *st.no_new_privs == 1;
  } else {
    return o.fail("prctl(PR_GET_NO_NEW_PRIVS) failed and status has no NoNewPrivs", prctl_err);
  }
  return o;
}

}  // namespace

ProbeDescriptor no_new_privs_probe() {
  return {"no_new_privs", "the no_new_privs bit (prctl and status)", std::chrono::milliseconds(1000),
          observe_no_new_privs};
}

}  // namespace isoprobe
