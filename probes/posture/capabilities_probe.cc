// capabilities: the five capability sets of this process from /proc/self/status.
#include "probes/core/capability_names.h"
#include "probes/core/file_read.h"
#include "probes/core/probe.h"
#include "probes/core/proc_status.h"
#include "probes/core/text_util.h"

namespace isoprobe {

namespace {

Observation observe_capabilities(Context&) {
  Observation o;
  FileRead f = read_file_bounded("/proc/self/status", std::size_t{64} * 1024);
  if (!f.ok()) return o.fail("cannot read /proc/self/status", f.err);
  ProcStatus st = parse_proc_status(f.data);
  Evidence ev;
  for (auto line : split_lines(f.data, 200)) {
    if (line.substr(0, 3) == "Cap") ev.add_line(line);
  }
  o.evidence = ev.str();
  if (!st.cap_inh || !st.cap_prm || !st.cap_eff || !st.cap_bnd) {
    std::string why = "capability lines missing or malformed in /proc/self/status";
    for (const auto& p : st.problems) why += "; " + p;
    return o.fail(why);
  }
  o.value = {{"inh", hex16(*st.cap_inh)},
             {"prm", hex16(*st.cap_prm)},
             {"eff", hex16(*st.cap_eff)},
             {"bnd", hex16(*st.cap_bnd)},
             // CapAmb is missing before Linux 4.3 and in some emulations: report it as 0.
             {"amb", hex16(st.cap_amb.value_or(0))},
             {"amb_present", st.cap_amb.has_value()},
             {"eff_names", capability_names(*st.cap_eff)},
             {"prm_names", capability_names(*st.cap_prm)},
             {"bnd_names", capability_names(*st.cap_bnd)}};
  return o;
}

}  // namespace

ProbeDescriptor capabilities_probe() {
  return {"capabilities", "CapInh/Prm/Eff/Bnd/Amb as hex and names", std::chrono::milliseconds(1000),
          observe_capabilities};
}

}  // namespace isoprobe
