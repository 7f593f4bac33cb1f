// devices: names in /dev beyond the set every container gets.
#include <algorithm>
#include <set>
#include <string>

#include "probes/core/file_read.h"
#include "probes/core/probe.h"
#include "probes/core/probe_support.h"
#include "probes/core/text_util.h"

namespace isoprobe {

namespace {

const std::set<std::string> kStandard = {"null",    "zero",   "full",   "random", "urandom", "tty",
                                         "console", "ptmx",   "pts",    "shm",    "fd",      "stdin",
                                         "stdout",  "stderr", "mqueue", "core"};

Observation observe_devices(Context&) {
  Observation o;
  DirList d = list_dir("/dev", 8192);
  if (d.err && d.names.empty()) {
    o.value = {{"extra", nlohmann::json::array()}, {"total", 0}};
    return o.fail("cannot list /dev", d.err);
  }
  std::vector<std::string> extra;
  for (const auto& n : d.names) {
    if (!kStandard.count(n)) extra.push_back(n);
  }
  std::sort(extra.begin(), extra.end());
  std::string listing;
  for (const auto& n : extra) listing += n + " ";
  Evidence ev;
  ev.add("/dev beyond the standard set", listing.empty() ? "(none)" : listing);
  o.value = {{"extra", extra}, {"total", d.names.size()}, {"truncated", d.truncated}};
  o.evidence = ev.str();
  return o;
}

}  // namespace

ProbeDescriptor devices_probe() {
  return {"devices", "device nodes in /dev beyond the standard set", std::chrono::milliseconds(1000),
          observe_devices};
}

}  // namespace isoprobe
