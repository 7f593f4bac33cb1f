// Reading what `hawk status ID` prints: JSON whose `pod_status.pods[]` describe the eval's
// pods (name, namespace, phase, component, container_statuses[], events[]). The text comes
// from a platform and may be hostile or simply newer than this code: every size is bounded,
// a value of the wrong type is dropped (and noted), and `pod_status` may be null. Text only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/common/expected.h"

namespace isoharness::deploy::hawk {

struct ContainerStatus {
  std::string name, state, reason, message;
  bool ready = false;
  long restart_count = 0;
};

struct PodEvent {
  std::string type, reason, message, timestamp;
  long count = 0;
};

struct Pod {
  std::string name, namespace_, phase, component;  // component: "runner", "sandbox" or ""
  // The node the pod was scheduled on (Kubernetes' spec.nodeName), as `node_name`. The
  // platform's PodStatusInfo (inspect-action 564a080) does not carry it; read when present.
  std::string node_name;
  std::vector<ContainerStatus> containers;
  std::vector<PodEvent> events;
};

struct EvalStatus {
  bool pod_status_null = false;
  std::vector<Pod> pods;
  std::vector<std::string> dropped;  // what was ignored (wrong types, past a bound)
};

inline constexpr std::size_t kMaxStatusText = 4 << 20;
inline constexpr std::size_t kMaxPods = 64;
inline constexpr std::size_t kMaxContainers = 16;
inline constexpr std::size_t kMaxEvents = 32;
inline constexpr std::size_t kMaxField = 512;

// Fails only when the text is not a JSON object (or is too large).
Expected<EvalStatus> parse_status(std::string_view text);

// The sandbox pods (component "sandbox"; every pod when none says so), each with phase,
// container states and reasons, and events, on one line each: for error messages.
std::string describe_sandbox_pods(const EvalStatus& status);

// The services whose container runs in a sandbox pod (the chart names each service's
// container after the service; its `coredns` companion is left out), in the order seen.
std::vector<std::string> running_services(const EvalStatus& status);

// Why a sandbox pod is held short of running, as Kubernetes says it (a container's waiting
// reason, or the pod's events): the states a pod sits in rather than reaching Failed.
enum class StuckReason {
  none,
  crash_loop,     // CrashLoopBackOff: its container starts and exits, again and again
  image_pull,     // ImagePullBackOff, ErrImagePull, InvalidImageName, ErrImageNeverPull
  config_error,   // CreateContainerConfigError, CreateContainerError, RunContainerError
  unschedulable,  // Pending with a FailedScheduling event and no container yet
};

// A sandbox pod held short of running: the reason, its words, the pod and container, the
// container's restarts and the pod's last event ("reason: message", "" when it lists none;
// the platform lists events only for pods not running).
struct Stuck {
  StuckReason reason = StuckReason::none;
  std::string word;  // Kubernetes' own word: "CrashLoopBackOff", "FailedScheduling", ...
  std::string pod, container, message, last_event;
  long restarts = 0;
};

// The first sandbox pod held short of running, judged from one status: none when every
// sandbox pod runs (or is on its way without any of these reasons). Text only.
Stuck stuck_sandbox(const EvalStatus& status);

// "CrashLoopBackOff in pod NS/NAME, container default (4 restarts): <message>; last event
// BackOff: <message>", for the item's error.
std::string describe_stuck(const Stuck& stuck);

// Whether a sandbox pod's phase is Running.
bool sandbox_running(const EvalStatus& status);

// The node the agent's sandbox pod runs on (the sandbox pod with a container named
// `default`, else the first sandbox pod naming a node); empty when status names none.
std::string sandbox_node_name(const EvalStatus& status);

// The agent's sandbox pod (the sandbox pod with a container named `default`); nullptr when
// status names none. Its name and namespace identify the sandbox to Hubble.
const Pod* agent_sandbox_pod(const EvalStatus& status);

}  // namespace isoharness::deploy::hawk
