// processes: how many processes we can see in /proc, and what PID 1 is.
#include <unistd.h>

#include <string>

#include "probes/core/file_read.h"
#include "probes/core/probe.h"
#include "probes/core/text_util.h"

namespace isoprobe {

namespace {

Observation observe_processes(Context&) {
  Observation o;
  DirList d = list_dir("/proc", 200000);
  if (d.err && d.names.empty()) return o.fail("cannot list /proc", d.err);
  long visible = 0;
  for (const auto& n : d.names) {
    if (parse_u64(n)) ++visible;
  }
  FileRead cmd = read_file_bounded("/proc/1/cmdline", 4096);
  std::string pid1;
  if (cmd.ok()) {
    for (char c : cmd.data) pid1.push_back(c == '\0' ? ' ' : c);
    pid1 = std::string(trim(pid1));
  }
  if (pid1.empty()) {
    FileRead comm = read_file_bounded("/proc/1/comm", 256);
    if (comm.ok()) pid1 = "[" + std::string(trim(comm.data)) + "]";
  }
  o.value = {{"visible", visible}, {"pid1", pid1}, {"self_pid", static_cast<long>(::getpid())}};
  o.evidence =
      "numeric entries in /proc: " + std::to_string(visible) + "; /proc/1/cmdline: " + pid1.substr(0, 512);
  return o;
}

}  // namespace

ProbeDescriptor processes_probe() {
  return {"processes", "visible processes and PID 1", std::chrono::milliseconds(2000), observe_processes};
}

}  // namespace isoprobe
