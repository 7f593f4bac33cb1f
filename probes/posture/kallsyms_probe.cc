// kallsyms: is /proc/kallsyms absent, empty, zeroed or populated (read up to 1 MiB)?
#include <cerrno>

#include "probes/core/file_read.h"
#include "probes/core/kallsyms.h"
#include "probes/core/probe.h"
#include "probes/core/text_util.h"

namespace isoprobe {

namespace {

Observation observe_kallsyms(Context&) {
  Observation o;
  FileRead f = read_file_bounded("/proc/kallsyms");
  if (f.err == ENOENT) {
    o.value = {{"state", "absent"}, {"lines", 0}, {"truncated", false}};
    o.evidence = "/proc/kallsyms: ENOENT";
    return o;
  }
  if (!f.ok()) {
    o.value = {{"state", "unreadable"}, {"lines", 0}, {"truncated", false}};
    return o.fail("cannot read /proc/kallsyms", f.err);
  }
  // A read cut at the bound ends mid-line: classify whole lines only.
  if (f.truncated) {
    std::size_t last = f.data.rfind('\n');
    f.data.resize(last == std::string::npos ? 0 : last + 1);
  }
  KallsymsClass c = classify_kallsyms(f.data);
  o.value = {{"state", c.state},         {"lines", c.lines},         {"nonzero", c.nonzero},
             {"malformed", c.malformed}, {"truncated", f.truncated}, {"bytes_read", f.data.size()}};
  Evidence ev;
  auto lines = split_lines(f.data, 3);
  std::string head;
  for (auto l : lines) head += std::string(l) + "\n";
  ev.add("first lines", head.empty() ? "(empty)" : head);
  o.evidence = ev.str();
  return o;
}

}  // namespace

ProbeDescriptor kallsyms_probe() {
  return {"kallsyms", "/proc/kallsyms: absent, empty, zeroed or populated", std::chrono::milliseconds(2000),
          observe_kallsyms};
}

}  // namespace isoprobe
