// Compose quantities -> the chart's: deploy.resources, mem_limit and cpus -> resources;
// healthcheck -> readinessProbe. Byte values and durations are read the way the sandbox
// package reads them (docs/CONTRACTS.md "Task sandbox files").
#include <algorithm>
#include <regex>

#include "harness/scenario/compose_service.h"

namespace isoharness::scenario {

namespace {

// "2gb" -> "2Gi", "512b" -> "512"; nullopt for anything else (a bare number included).
std::optional<std::string> compose_byte_value(const nlohmann::json& v) {
  if (!v.is_string()) return std::nullopt;
  static const std::regex re("^(\\d+(?:\\.\\d+)?)(gb?|mb?|kb?|b)$", std::regex::icase);
  std::smatch m;
  const std::string s = v.get<std::string>();
  if (!std::regex_match(s, m, re)) return std::nullopt;
  const char unit = static_cast<char>(std::tolower(static_cast<unsigned char>(m[2].str()[0])));
  const char* suffix = unit == 'g' ? "Gi" : unit == 'm' ? "Mi" : unit == 'k' ? "Ki" : "";
  return m[1].str() + suffix;
}

// "1h2m3s" -> 3723; nullopt for anything else (a bare number included).
std::optional<std::int64_t> compose_duration(const nlohmann::json& v) {
  if (!v.is_string()) return std::nullopt;
  static const std::regex re("^(?:(\\d{1,6})h)?(?:(\\d{1,6})m)?(?:(\\d{1,6})s)?$");
  std::smatch m;
  const std::string s = v.get<std::string>();
  if (!std::regex_match(s, m, re)) return std::nullopt;
  auto part = [&](int i) { return m[i].matched ? std::stoll(m[i].str()) : 0LL; };
  return part(1) * 3600 + part(2) * 60 + part(3);
}

bool cpu_quantity(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>() > 0;
  static const std::regex re("^\\d+(\\.\\d+)?$");
  return v.is_string() && std::regex_match(v.get<std::string>(), re);
}

// One cpus or memory value into out's "cpu" / "memory", or a problem.
void take_quantity(const std::string& key, const nlohmann::json& value, const std::string& kp,
                   const std::string& item, const SandboxProblems& problems, nlohmann::json& out) {
  if (key == "cpus") {
    if (cpu_quantity(value))
      out["cpu"] = value;
    else
      problems(kp, "cpus must be a positive number, e.g. 0.5", item);
  } else if (auto bytes = compose_byte_value(value)) {
    out["memory"] = *bytes;
  } else {
    problems(kp, "unsupported byte value " + brief_json(value) + " (a number with b, k, m or g, e.g. 2gb)",
             item);
  }
}

// The sandbox package refuses `devices` in a resource (an unsupported key); a GPU is asked
// for through the service's x-inspect_k8s_sandbox resources, as the platform detects it.
std::string devices_refusal() {
  return "'devices' is refused by the sandbox package (an unsupported key in a resource); ask for a GPU "
         "with the service's x-inspect_k8s_sandbox: {resources: {limits: {nvidia.com/gpu: N}}}";
}

// limits / reservations: {cpus, memory}.
nlohmann::json read_resource(const nlohmann::json& r, const std::string& p, const std::string& item,
                             const SandboxProblems& problems) {
  nlohmann::json out = nlohmann::json::object();
  if (!r.is_object()) {
    problems(p, "must be a mapping {cpus, memory}", item);
    return out;
  }
  for (const auto& [key, value] : r.items()) {
    const std::string kp = pointer_join(p, key);
    if (key == "cpus" || key == "memory") {
      take_quantity(key, value, kp, item, problems, out);
    } else if (key == "devices") {
      problems(kp, devices_refusal(), item);
    } else {
      problems(kp, "unsupported compose key '" + key + "' in a resource (known: cpus, memory)", item);
    }
  }
  return out;
}

nlohmann::json read_deploy(const nlohmann::json& deploy, const std::string& p, const std::string& item,
                           const SandboxProblems& problems) {
  nlohmann::json resources = nlohmann::json::object();
  if (!deploy.is_object()) {
    problems(p, "deploy must be a mapping {resources}", item);
    return resources;
  }
  for (const auto& [key, value] : deploy.items()) {
    if (key != "resources") {
      problems(pointer_join(p, key), "unsupported compose key '" + key + "' in deploy (known: resources)",
               item);
      continue;
    }
    const std::string rp = pointer_join(p, "resources");
    if (!value.is_object()) {
      problems(rp, "deploy.resources must be a mapping {limits, reservations}", item);
      continue;
    }
    for (const auto& [rk, rv] : value.items()) {
      if (rk == "limits")
        resources["limits"] = read_resource(rv, pointer_join(rp, rk), item, problems);
      else if (rk == "reservations")
        resources["requests"] = read_resource(rv, pointer_join(rp, rk), item, problems);
      else
        problems(pointer_join(rp, rk),
                 "unsupported compose key '" + rk + "' in deploy.resources (known: limits, reservations)",
                 item);
    }
  }
  for (const char* section : {"limits", "requests"})
    if (resources.contains(section) && resources[section].empty()) resources.erase(section);
  return resources;
}

}  // namespace

void convert_compose_resources(const nlohmann::json& service, const std::string& pointer,
                               const std::string& item, const SandboxProblems& problems,
                               nlohmann::json& chart) {
  nlohmann::json resources = nlohmann::json::object();
  if (service.contains("deploy")) {
    // deploy.resources wins over the mem_limit / cpus shortcuts, as in the package.
    resources = read_deploy(service["deploy"], pointer_join(pointer, "deploy"), item, problems);
  }
  if (!service.contains("deploy") || resources.empty()) {
    nlohmann::json limits = nlohmann::json::object();
    if (service.contains("mem_limit"))
      take_quantity("memory", service["mem_limit"], pointer_join(pointer, "mem_limit"), item, problems,
                    limits);
    if (service.contains("cpus"))
      take_quantity("cpus", service["cpus"], pointer_join(pointer, "cpus"), item, problems, limits);
    if (!limits.empty()) resources["limits"] = std::move(limits);
  }
  // Requests default to the limits (Guaranteed QoS), as the package sets them.
  if (resources.contains("limits") && !resources.contains("requests"))
    resources["requests"] = resources["limits"];
  if (!resources.empty()) chart["resources"] = std::move(resources);
}

nlohmann::json convert_compose_healthcheck(const nlohmann::json& hc, const std::string& p,
                                           const std::string& item, const SandboxProblems& problems) {
  nlohmann::json probe = nlohmann::json::object();
  if (!hc.is_object()) {
    problems(p, "healthcheck must be a mapping {test, interval, timeout, retries, start_period}", item);
    return probe;
  }
  static const std::vector<std::pair<std::string, std::string>> durations = {
      {"start_period", "initialDelaySeconds"}, {"interval", "periodSeconds"}, {"timeout", "timeoutSeconds"}};
  for (const auto& [key, value] : hc.items()) {
    const std::string kp = pointer_join(p, key);
    auto duration = std::find_if(durations.begin(), durations.end(),
                                 [&key = key](const auto& d) { return d.first == key; });
    if (key == "test") {
      const bool list = value.is_array() && value.size() >= 2 &&
                        std::all_of(value.begin(), value.end(), [](const auto& x) { return x.is_string(); });
      if (list && value[0] == "CMD") {
        probe["exec"]["command"] =
            nlohmann::json(std::vector<nlohmann::json>(value.begin() + 1, value.end()));
      } else if (list && value[0] == "CMD-SHELL" && value.size() == 2) {
        probe["exec"]["command"] = {"sh", "-c", value[1]};
      } else {
        problems(kp, "healthcheck.test must be a list starting with CMD or CMD-SHELL", item);
      }
    } else if (duration != durations.end()) {
      if (auto seconds = compose_duration(value))
        probe[duration->second] = *seconds;
      else
        problems(kp, "unsupported duration " + brief_json(value) + " (hours, minutes, seconds, e.g. 1m30s)",
                 item);
    } else if (key == "retries") {
      if (value.is_number_integer() && value.get<std::int64_t>() >= 0 && value.get<std::int64_t>() < 1000000)
        probe["failureThreshold"] = value.get<std::int64_t>() + 1;  // N retries = N + 1 failures
      else
        problems(kp, "retries must be a whole number", item);
    } else if (key != "start_interval") {  // the package ignores start_interval
      problems(kp,
               "unsupported compose key '" + key +
                   "' in healthcheck (known: test, interval, timeout, retries, start_period, start_interval)",
               item);
    }
  }
  if (!hc.contains("test")) problems(p, "healthcheck needs test: [CMD, ...] or [CMD-SHELL, ...]", item);
  return probe;
}

}  // namespace isoharness::scenario
