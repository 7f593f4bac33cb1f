// kubernetes: a mounted service-account token and KUBERNETES_SERVICE_* variables.
// The token's content is never read.
#include <string>
#include <vector>

#include "probes/core/file_read.h"
#include "probes/core/probe.h"
#include "probes/core/text_util.h"

extern char** environ;

namespace isoprobe {

namespace {

Observation observe_kubernetes(Context&) {
  Observation o;
  Evidence ev;
  int err = 0;
  bool token = path_exists("/var/run/secrets/kubernetes.io/serviceaccount/token", &err) ||
               path_exists("/run/secrets/kubernetes.io/serviceaccount/token", &err);
  ev.add_line(std::string("service-account token: ") + (token ? "present" : "absent"));
  std::vector<std::string> names;
  for (char** e = environ; e && *e && names.size() < 64; ++e) {
    std::string_view kv(*e);
    if (kv.substr(0, 11) != "KUBERNETES_") continue;
    std::size_t eq = kv.find('=');
    names.emplace_back(kv.substr(0, eq));
    ev.add_line(kv.substr(0, 200));
  }
  o.value = {{"service_account_token", token}, {"env", names}};
  o.evidence = ev.str();
  return o;
}

}  // namespace

ProbeDescriptor kubernetes_probe() {
  return {"kubernetes", "service-account token and KUBERNETES_* environment", std::chrono::milliseconds(1000),
          observe_kubernetes};
}

}  // namespace isoprobe
