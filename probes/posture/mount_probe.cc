// mount: can a short-lived child mount a tmpfs? The child first enters a new mount
// namespace and makes every mount in it private, so nothing it mounts can propagate
// back to the namespace we share with others (or to the host). If either step fails
// it never attempts the mount. The namespace dies with the child.
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>

#include "probes/core/child_process.h"
#include "probes/core/probe.h"
#include "probes/core/probe_support.h"

namespace isoprobe {

namespace {

const char* g_target = "/";  // chosen before fork; read-only afterwards

ChildReport try_mount_tmpfs() {
  if (::unshare(CLONE_NEWNS) != 0) return {1, errno};
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return {2, errno};
  if (::mount("isoprobe", g_target, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=16k,mode=0700") != 0)
    return {3, errno};
  if (::umount2(g_target, MNT_DETACH) != 0) return {4, errno};
  return {0, 0};
}

constexpr const char* kSteps[] = {"", "unshare(CLONE_NEWNS)", "make mounts private", "mount tmpfs", "umount"};

Observation observe_mount(Context& ctx) {
  Observation o;
  struct stat st;
  g_target = (::stat("/tmp", &st) == 0 && S_ISDIR(st.st_mode)) ? "/tmp" : "/";
  ChildResult r = run_in_child(try_mount_tmpfs, ctx.remaining());
  o.evidence = std::string("child on ") + g_target + ": " + r.describe();
  if (!r.reported) return o.fail(r.describe(), r.spawn_err);
  int step = r.report.step;
  bool mounted = step == 0 || step == 4;
  o.value = {
      {"tmpfs_mounted", mounted}, {"new_mount_namespace", step == 0 || step > 1},
      {"target", g_target},       {"failed_step", step == 0 ? "" : kSteps[step < 5 && step > 0 ? step : 0]},
      {"errno", r.report.err},    {"error", step == 0 ? "" : errno_name(r.report.err)}};
  return o;
}

}  // namespace

ProbeDescriptor mount_probe() {
  return {"mount", "a child tries to mount a tmpfs in a private mount namespace",
          std::chrono::milliseconds(2000), observe_mount};
}

}  // namespace isoprobe
