// `crictl inspect` output read with the never-throwing readers (cri_inspect.h).
#include "harness/deploy/cri_inspect.h"

#include "harness/common/json_read.h"

namespace isoharness::deploy {

Expected<CriContainer> read_crictl_inspect(std::string_view text) {
  using common::json_int;
  using common::json_object;
  using common::json_string_or;
  if (text.size() > kMaxCriInspectBytes) return make_error("larger than 4 MiB");
  bool too_deep = false;
  const auto doc = nlohmann::json::parse(
      text,
      [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
        if (depth > 64) too_deep = true;
        return !too_deep;
      },
      false);
  if (too_deep) return make_error("JSON nested deeper than 64 levels");
  if (doc.is_discarded() || !doc.is_object()) return make_error("not a JSON object");
  const nlohmann::json* status = json_object(doc, "status");
  if (!status) return make_error("no status object: not what crictl inspect prints");
  CriContainer c;
  c.id = json_string_or(*status, "id", "");
  c.state = json_string_or(*status, "state", "");
  if (const auto* meta = json_object(*status, "metadata")) c.name = json_string_or(*meta, "name", "");
  if (const auto* labels = json_object(*status, "labels")) {
    c.pod_uid = json_string_or(*labels, "io.kubernetes.pod.uid", "");
    c.pod_name = json_string_or(*labels, "io.kubernetes.pod.name", "");
    c.pod_namespace = json_string_or(*labels, "io.kubernetes.pod.namespace", "");
  }
  if (c.id.empty()) return make_error("status.id is missing");
  if (const auto* info = json_object(doc, "info")) {
    c.sandbox_id = json_string_or(*info, "sandboxID", "");
    c.runtime_type = json_string_or(*info, "runtimeType", "");
    if (const auto pid = json_int(*info, "pid"); pid && *pid > 0 && *pid < (1 << 22))
      c.pid = static_cast<int>(*pid);
    if (const auto* spec = json_object(*info, "runtimeSpec")) c.runtime_spec = *spec;
  }
  return c;
}

}  // namespace isoharness::deploy
