// Translates a SandboxSpec into an OCI runtime config.json, as containerd would for the
// same Kubernetes securityContext: capabilities, noNewPrivileges, seccomp, user, read-only
// root, emptyDir scratch (tmpfs), containerd's masked and read-only paths, hostname, and
// the CPU set of the node class. The same document serves runc and runsc; the only
// difference is the network namespace (runc joins the sandbox's named namespace through
// the spec; runsc runs with --network=host inside that namespace and must not be given one).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "harness/deploy/local/oci_runtime.h"
#include "harness/deploy/local/sandbox_spec.h"

namespace isoharness::deploy::local {

struct BundleInputs {
  OciRuntime runtime = OciRuntime::runc;
  std::string hostname;
  std::string netns_path;         // runc: /var/run/netns/NAME; ignored for runsc
  std::string cgroups_path;       // e.g. "/ih-<run>-<name>.c"
  std::string cpuset;             // node class CPU list; empty = no pinning
  std::string host_usr = "/usr";  // bind-mounted read-only as the image's /usr
  std::vector<std::string> args;  // the container's process (sshd, or a sibling's listener)
  // Host directories bind-mounted read-only (source, destination): a sibling's isoprobe.
  std::vector<std::pair<std::string, std::string>> ro_binds;
  nlohmann::json seccomp;  // converted linux.seccomp; null when Unconfined
  // Bind-mounted read-only as the image's /etc/alternatives (the targets of symlinks in
  // /usr such as /usr/bin/awk); empty when the host has none.
  std::string host_alternatives = "/etc/alternatives";
  // A directory holding a service-account token (pod_controls.h), bound read-only where
  // the kubelet puts one; empty when the values do not automount a token.
  std::string service_account_dir;
  // The bind source of each of the spec's host paths, in order: the staging point its
  // directory was bound at by descriptor (host_path_bind.h), never the path itself.
  std::vector<std::string> host_path_sources;
};

// Where the kubelet mounts a pod's service-account token (/var/run/secrets/...): the
// local image's /var/run is a link to /run, so the same place is named through /run.
inline constexpr const char* kServiceAccountPath = "/run/secrets/kubernetes.io/serviceaccount";

nlohmann::json make_oci_config(const SandboxSpec& spec, const BundleInputs& in);

// containerd's defaults, exposed for tests and the README.
const std::vector<std::string>& containerd_masked_paths();
const std::vector<std::string>& containerd_readonly_paths();

}  // namespace isoharness::deploy::local
