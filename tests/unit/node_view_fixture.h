#pragma once
// The node's view of the clean sandbox of posture_fixture.h (a strict sandbox, a non-root
// user, a read-only root, no capabilities), as the local backend reads it: under runc the
// init process's /proc, under runsc the spec and the sentry. A test breaks one fact of it.

#include "harness/deploy/node_view.h"

namespace isoharness::test {

inline deploy::NodeView clean_node_view(bool gvisor) {
  deploy::NodeView v;
  v.witness = "test node";
  v.unix_ms = 1700000000000;
  deploy::NodeContainer c;
  c.id = "ih-test-0";
  c.service = "default";
  c.runtime = gvisor ? deploy::NodeRuntime::runsc : deploy::NodeRuntime::runc;
  c.runtime_evidence = gvisor ? "runsc state: running" : "runc state: running";
  c.init_pid = 4242;
  c.source = gvisor ? "spec" : "proc";
  c.process.cap_eff = 0;
  c.process.cap_prm = 0;
  c.process.cap_bnd = 0;
  c.process.cap_amb = 0;
  c.process.no_new_privs = true;
  c.process.seccomp_mode = gvisor ? 0 : 2;
  c.process.seccomp_filters = gvisor ? 0 : 1;
  c.process.uid = 1000;
  c.process.gid = 1000;
  c.process.shares_node = {false, false, false, false, false, false, false};
  c.filesystem.root_read_only = true;
  c.filesystem.host_paths = std::vector<std::string>{"/etc/resolv.conf"};
  c.filesystem.masked_paths = std::vector<std::string>{"/proc/kcore", "/proc/keys"};
  c.filesystem.read_only_paths = std::vector<std::string>{"/proc/sys", "/proc/sysrq-trigger"};
  c.filesystem.runtime_sockets = std::vector<std::string>{};
  c.filesystem.service_account_tokens = std::vector<std::string>{};
  c.filesystem.cgroup_writable = false;
  c.filesystem.proc_sys_read_only = true;
  c.filesystem.debugfs_mounted = false;
  c.devices = std::vector<std::string>{};
  c.kptr_restrict = 1;
  if (gvisor) {
    deploy::NodeGvisor g;
    g.platform = "ptrace";
    g.network = "host";
    g.nvproxy = false;
    g.net_raw = false;
    g.oci_seccomp = false;
    g.sentry_pid = 4300;
    g.sentry.seccomp_mode = 2;
    g.processes_hidden = true;
    c.gvisor = g;
  }
  v.containers.push_back(c);
  return v;
}

}  // namespace isoharness::test
