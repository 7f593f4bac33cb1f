// userns: can a short-lived child create a user namespace? The child calls
// unshare(CLONE_NEWUSER) and exits; nothing of it outlives the child.
#include <sched.h>

#include <cerrno>

#include "probes/core/child_process.h"
#include "probes/core/probe.h"
#include "probes/core/probe_support.h"

namespace isoprobe {

namespace {

ChildReport try_unshare_user() {
  if (::unshare(CLONE_NEWUSER) != 0) return {1, errno};
  return {0, 0};
}

Observation observe_userns(Context& ctx) {
  Observation o;
  ChildResult r = run_in_child(try_unshare_user, ctx.remaining());
  o.evidence = "child unshare(CLONE_NEWUSER): " + r.describe();
  if (!r.reported) return o.fail(r.describe(), r.spawn_err);
  bool created = r.report.step == 0;
  o.value = {
      {"created", created}, {"errno", r.report.err}, {"error", created ? "" : errno_name(r.report.err)}};
  return o;
}

}  // namespace

ProbeDescriptor userns_probe() {
  return {"userns", "a child tries unshare(CLONE_NEWUSER)", std::chrono::milliseconds(2000), observe_userns};
}

}  // namespace isoprobe
