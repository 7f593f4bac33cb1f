// The Kubernetes API's objects a deployment's sandboxes are made of, as the cluster admitted
// them (docs/CONTRACTS.md §4.9): the eval's pods (a v1 `List` of `Pod`s, as `kubectl get
// pods -n NS -l SELECTOR -o json` prints it), the `RuntimeClass` objects they name (each
// one's `handler`), and the namespace's `CiliumNetworkPolicy` objects. The text comes from
// the cluster, which a sandbox whose isolation broke may reach, so the readers never throw:
// a member of the wrong type reads as absent, the text and every list are bounded, and a
// document that is no object of the expected kind is an error naming why.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/common/expected.h"

namespace isoharness::deploy {

// Bounds on what is read: the whole text, and each list in it.
struct KubeReadLimits {
  std::size_t max_bytes = std::size_t{16} << 20;
  std::size_t max_items = 256;  // pods, runtime classes, policies, containers, volumes, rules, ...
  std::size_t max_string = 1024;
};

// A container's or a pod's securityContext, each member absent when the object leaves it out.
struct KubeSecurityContext {
  std::optional<bool> privileged;
  std::optional<bool> allow_privilege_escalation;
  std::optional<bool> run_as_non_root;
  std::optional<long long> run_as_user;
  std::optional<bool> read_only_root_filesystem;
  std::optional<std::string> seccomp_type;  // seccompProfile.type: RuntimeDefault, Localhost, Unconfined
  std::optional<std::vector<std::string>> capabilities_add;
  std::optional<std::vector<std::string>> capabilities_drop;
};

struct KubeContainer {
  std::string name;  // the chart names each service's container after the service
  KubeSecurityContext security;
  // resources.limits / resources.requests nvidia.com/gpu, the larger; absent when neither.
  std::optional<long long> gpus;
  std::vector<std::string> volume_mounts;   // the volume names it mounts
  std::vector<std::string> volume_devices;  // volumeDevices' devicePath
  bool init = false;                        // from spec.initContainers
};

struct KubeVolume {
  std::string name;
  std::optional<std::string> host_path;  // hostPath.path
  bool service_account_token = false;    // projected with a serviceAccountToken source
  bool secret = false;
  bool empty_dir = false;
};

struct KubePod {
  std::string name, namespace_, uid, node_name, phase;
  std::map<std::string, std::string> labels;
  // spec.runtimeClassName; absent: the node's default runtime handler.
  std::optional<std::string> runtime_class_name;
  std::optional<bool> host_pid, host_network, host_ipc;
  std::optional<bool> automount_service_account_token;
  KubeSecurityContext pod_security;  // spec.securityContext (runAsNonRoot, runAsUser, seccompProfile)
  std::vector<KubeContainer> containers;
  std::vector<KubeVolume> volumes;

  const KubeContainer* container(std::string_view wanted) const;
  const KubeVolume* volume(std::string_view wanted) const;
};

struct KubePodList {
  std::vector<KubePod> pods;
  std::vector<std::string> problems;  // what was cut or read as absent, for the evidence
};

// A v1 List (or PodList) of Pods. An error when the text is larger than the bound, not
// JSON, or not a list; an item that is no Pod is skipped and named in problems.
Expected<KubePodList> read_pod_list(std::string_view text, const KubeReadLimits& limits = {});

struct KubeRuntimeClass {
  std::string name;
  std::string handler;  // the CRI handler (containerd's runtime name), "" when absent
};

// One RuntimeClass (`kubectl get runtimeclass NAME -o json`) or a List of them.
Expected<std::vector<KubeRuntimeClass>> read_runtime_classes(std::string_view text,
                                                             const KubeReadLimits& limits = {});

// A Cilium endpoint selector: matchLabels and the keys matchExpressions name.
struct CiliumSelector {
  std::map<std::string, std::string> match_labels;
  std::vector<std::string> expression_keys;
  bool empty() const { return match_labels.empty() && expression_keys.empty(); }
};

struct CiliumPort {
  std::string port;      // as written ("443", "0-65535" forms stay text)
  std::string protocol;  // TCP, UDP, SCTP, ANY, ICMP ("" when absent)
};

// One ingress or egress rule: the peers it names and the ports it opens.
struct CiliumRule {
  std::vector<CiliumSelector> endpoints;  // fromEndpoints / toEndpoints
  std::vector<std::string> entities;      // fromEntities / toEntities
  std::vector<std::string> cidrs;         // fromCIDR / toCIDR and fromCIDRSet / toCIDRSet cidr
  std::vector<std::string> fqdns;         // toFQDNs matchName / matchPattern
  std::vector<CiliumPort> ports;          // toPorts[].ports[]
};

struct CiliumPolicy {
  std::string name, namespace_;
  CiliumSelector endpoint_selector;
  std::vector<CiliumRule> ingress, egress, ingress_deny, egress_deny;
};

// A CiliumNetworkPolicy, or a List of them (a policy's `specs` list is read as several
// policies of the same name).
Expected<std::vector<CiliumPolicy>> read_cilium_policies(std::string_view text,
                                                         const KubeReadLimits& limits = {});

}  // namespace isoharness::deploy

namespace isoharness::deploy {

// What the Kubernetes API showed of one sandbox's eval (the profile's kubernetes_api:
// section), read after its probe ran: the objects, or why there are none.
struct KubernetesApiView {
  enum class State {
    read,        // the pods were read (runtime classes and policies when the profile names them)
    unreadable,  // the profile names a source, and it could not be read: nothing is judged on it
    absent,      // the profile names no source (the summary says so)
    waived,      // `kubernetes_api: none`: the deployment declares it has no view of the API
  };
  State state = State::absent;
  std::string source;  // who answered, for the evidence ("kubectl get pods ...", a file)
  std::string note;    // why unreadable
  std::vector<KubePod> pods;
  bool runtime_classes_read = false;
  std::vector<KubeRuntimeClass> runtime_classes;
  bool policies_read = false;
  std::vector<CiliumPolicy> policies;
  std::vector<std::string> problems;  // what the readers cut or skipped
};

}  // namespace isoharness::deploy
