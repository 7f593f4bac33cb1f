#include "harness/deploy/hawk/status_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace isoharness::deploy::hawk {
namespace {

using nlohmann::json;

// Printable ASCII only, at most kMaxField characters: this text ends up in terminals.
std::string clean(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (out.size() >= kMaxField) {
      out += "…";
      break;
    }
    unsigned char u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u >= 0x7f) ? '?' : c;
  }
  return out;
}

struct Reader {
  std::vector<std::string>& dropped;

  std::string text(const json& obj, const char* key, const std::string& where) {
    if (!obj.contains(key) || obj[key].is_null()) return "";
    if (!obj[key].is_string()) {
      dropped.push_back(fmt::format("{}.{}: not a string", where, key));
      return "";
    }
    return clean(obj[key].get_ref<const std::string&>());
  }
  long number(const json& obj, const char* key, const std::string& where) {
    if (!obj.contains(key) || obj[key].is_null()) return 0;
    if (!obj[key].is_number_integer()) {
      dropped.push_back(fmt::format("{}.{}: not an integer", where, key));
      return 0;
    }
    return obj[key].get<long>();
  }
  bool boolean(const json& obj, const char* key, const std::string& where) {
    if (!obj.contains(key) || obj[key].is_null()) return false;
    if (!obj[key].is_boolean()) {
      dropped.push_back(fmt::format("{}.{}: not a boolean", where, key));
      return false;
    }
    return obj[key].get<bool>();
  }
  // The objects of obj[key], at most `max`; anything else is dropped and noted.
  std::vector<const json*> objects(const json& obj, const char* key, std::size_t max,
                                   const std::string& where) {
    std::vector<const json*> out;
    if (!obj.contains(key) || obj[key].is_null()) return out;
    if (!obj[key].is_array()) {
      dropped.push_back(fmt::format("{}.{}: not a list", where, key));
      return out;
    }
    for (const auto& e : obj[key]) {
      if (!e.is_object()) {
        dropped.push_back(fmt::format("{}.{}[]: an entry is not an object", where, key));
      } else if (out.size() >= max) {
        dropped.push_back(fmt::format("{}.{}: more than {} entries", where, key, max));
        break;
      } else {
        out.push_back(&e);
      }
    }
    return out;
  }

  // state may be a word ("waiting") or Kubernetes' {waiting: {reason, message}} object.
  void container_state(const json& c, ContainerStatus& out, const std::string& where) {
    if (!c.contains("state") || c["state"].is_null()) return;
    if (c["state"].is_string()) {
      out.state = clean(c["state"].get_ref<const std::string&>());
    } else if (c["state"].is_object() && !c["state"].empty()) {
      // The first (only) key names the state. Iterate on the object itself: a structured
      // binding to *items().begin() would refer to a temporary that is already gone.
      const auto first = c["state"].begin();
      const json& detail = first.value();
      out.state = clean(first.key());
      if (detail.is_object()) {
        if (out.reason.empty()) out.reason = text(detail, "reason", where + ".state");
        if (out.message.empty()) out.message = text(detail, "message", where + ".state");
      }
    } else {
      dropped.push_back(where + ".state: neither a string nor an object");
    }
  }

  Pod pod(const json& p, std::size_t i) {
    const std::string where = fmt::format("pods[{}]", i);
    Pod out;
    out.name = text(p, "name", where);
    out.namespace_ = text(p, "namespace", where);
    out.phase = text(p, "phase", where);
    out.component = text(p, "component", where);
    out.node_name = text(p, "node_name", where);
    for (const json* c : objects(p, "container_statuses", kMaxContainers, where)) {
      ContainerStatus cs;
      const std::string cw = where + ".container_statuses[]";
      cs.name = text(*c, "name", cw);
      cs.ready = boolean(*c, "ready", cw);
      cs.reason = text(*c, "reason", cw);
      cs.message = text(*c, "message", cw);
      cs.restart_count = number(*c, "restart_count", cw);
      container_state(*c, cs, cw);
      out.containers.push_back(std::move(cs));
    }
    for (const json* e : objects(p, "events", kMaxEvents, where)) {
      const std::string ew = where + ".events[]";
      out.events.push_back({text(*e, "type", ew), text(*e, "reason", ew), text(*e, "message", ew),
                            text(*e, "timestamp", ew), number(*e, "count", ew)});
    }
    return out;
  }
};

std::vector<const Pod*> sandbox_pods(const EvalStatus& status) {
  std::vector<const Pod*> out;
  for (const auto& p : status.pods)
    if (p.component == "sandbox") out.push_back(&p);
  if (out.empty())
    for (const auto& p : status.pods)
      if (p.component != "runner") out.push_back(&p);
  return out;
}

}  // namespace

Expected<EvalStatus> parse_status(std::string_view text) {
  if (text.size() > kMaxStatusText) return make_error("hawk status: output larger than 4 MiB");
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return make_error("hawk status: the output is not a JSON object");
  EvalStatus status;
  Reader r{status.dropped};
  if (!doc.contains("pod_status") || doc["pod_status"].is_null()) {
    status.pod_status_null = true;
    return status;
  }
  if (!doc["pod_status"].is_object()) {
    status.dropped.push_back("pod_status: not an object");
    status.pod_status_null = true;
    return status;
  }
  std::size_t i = 0;
  for (const json* p : r.objects(doc["pod_status"], "pods", kMaxPods, "pod_status"))
    status.pods.push_back(r.pod(*p, i++));
  return status;
}

std::string describe_sandbox_pods(const EvalStatus& status) {
  if (status.pod_status_null) return "hawk status shows no pods yet (pod_status is null)";
  auto pods = sandbox_pods(status);
  if (pods.empty()) return "hawk status lists no sandbox pod";
  std::string out;
  for (const Pod* p : pods) {
    out += fmt::format("\n  pod {}/{}: {}", p->namespace_, p->name,
                       p->phase.empty() ? "phase unknown" : p->phase);
    for (const auto& c : p->containers) {
      out += fmt::format("; container {} {}{}", c.name, c.state.empty() ? "state unknown" : c.state,
                         c.reason.empty() ? "" : " (" + c.reason + ")");
      if (!c.message.empty()) out += ": " + c.message;
    }
    for (const auto& e : p->events)
      out += fmt::format("\n    event {} {}: {}{}", e.type, e.reason, e.message,
                         e.count > 1 ? fmt::format(" (x{})", e.count) : "");
  }
  return out;
}

std::vector<std::string> running_services(const EvalStatus& status) {
  std::vector<std::string> out;
  for (const auto& p : status.pods) {
    if (p.component == "runner" || p.phase != "Running") continue;
    for (const auto& c : p.containers)
      if (c.name != "coredns" && c.state == "running" &&
          std::find(out.begin(), out.end(), c.name) == out.end())
        out.push_back(c.name);
  }
  return out;
}

bool sandbox_running(const EvalStatus& status) {
  for (const Pod* p : sandbox_pods(status))
    if (p->phase == "Running") return true;
  return false;
}

std::string sandbox_node_name(const EvalStatus& status) {
  std::string first;
  for (const Pod* p : sandbox_pods(status)) {
    if (p->node_name.empty()) continue;
    for (const auto& c : p->containers)
      if (c.name == "default") return p->node_name;
    if (first.empty()) first = p->node_name;
  }
  return first;
}

namespace {

StuckReason container_stuck(const std::string& reason) {
  if (reason == "CrashLoopBackOff") return StuckReason::crash_loop;
  if (reason == "ImagePullBackOff" || reason == "ErrImagePull" || reason == "InvalidImageName" ||
      reason == "ErrImageNeverPull")
    return StuckReason::image_pull;
  if (reason == "CreateContainerConfigError" || reason == "CreateContainerError" ||
      reason == "RunContainerError")
    return StuckReason::config_error;
  return StuckReason::none;
}

std::string last_event_of(const Pod& p) {
  if (p.events.empty()) return "";
  const PodEvent& e = p.events.back();
  return e.reason + ": " + e.message;
}

}  // namespace

Stuck stuck_sandbox(const EvalStatus& status) {
  for (const Pod* p : sandbox_pods(status)) {
    if (p->phase == "Failed" || p->phase == "Succeeded") continue;  // ended: not held
    for (const auto& c : p->containers) {
      const StuckReason why = container_stuck(c.reason);
      if (why == StuckReason::none || c.ready) continue;
      return {why,
              c.reason,
              p->namespace_ + "/" + p->name,
              c.name,
              c.message,
              last_event_of(*p),
              c.restart_count};
    }
    if (p->phase != "Pending") continue;
    for (auto e = p->events.rbegin(); e != p->events.rend(); ++e)
      if (e->reason == "FailedScheduling")
        return {StuckReason::unschedulable, e->reason, p->namespace_ + "/" + p->name, "", e->message,
                last_event_of(*p),          0};
  }
  return {};
}

std::string describe_stuck(const Stuck& stuck) {
  if (stuck.reason == StuckReason::none) return "";
  std::string out = fmt::format("{} in pod {}", stuck.word, stuck.pod);
  if (!stuck.container.empty())
    out += fmt::format(", container {} ({} restart{})", stuck.container, stuck.restarts,
                       stuck.restarts == 1 ? "" : "s");
  if (!stuck.message.empty()) out += ": " + stuck.message;
  out +=
      stuck.last_event.empty() ? "; the platform lists no event for it" : "; last event " + stuck.last_event;
  return out;
}

}  // namespace isoharness::deploy::hawk

namespace isoharness::deploy::hawk {

const Pod* agent_sandbox_pod(const EvalStatus& status) {
  for (const Pod* p : sandbox_pods(status))
    for (const auto& c : p->containers)
      if (c.name == "default") return p;
  return nullptr;
}

}  // namespace isoharness::deploy::hawk
