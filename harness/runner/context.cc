#include "harness/runner/context.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>

#include "harness/common/build_info.h"
#include "harness/common/subprocess.h"
#include "harness/runner/parity_provenance.h"

namespace isoharness::runner {
namespace {

std::string first_line_of(const std::vector<std::string>& argv) {
  auto r = run_command(argv, RunOptions{.deadline = std::chrono::seconds(10), .max_output = 4096});
  if (!r || !r->ok()) return "absent";
  auto end = r->out.find('\n');
  return r->out.substr(0, end);
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return "";
  return line;
}

}  // namespace

std::string utc_now() {
  auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

nlohmann::json run_context(scenario::BackendKind backend, const std::string& deployment_path,
                           const scenario::DeploymentProfile* profile) {
  nlohmann::json context = host_context();
  context["started"] = utc_now();
  context["backend"] = scenario::backend_name(backend);
  context["deployment"] = deployment_path;
  separate_harness_host(context, profile ? declared_platform(*profile) : DeclaredPlatform{}, backend);
  return context;
}

nlohmann::json host_context() {
  utsname u{};
  ::uname(&u);
  std::string governor = read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  return {
      {"host", u.nodename},
      {"kernel", std::string(u.sysname) + " " + u.release + " " + u.version},
      {"machine", u.machine},
      {"cpus", static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN))},
      {"cpu_scaling", governor.empty() ? "unknown (no cpufreq)" : governor},
      {"tool_version", isoharness_build_version()},
      {"git_revision", isoharness_build_revision()},
      {"runc", first_line_of({"runc", "--version"})},
      {"runsc", first_line_of({"runsc", "--version"})},
  };
}

}  // namespace isoharness::runner
