// network: the interfaces of our network namespace and the hostname.
#include <net/if.h>
#include <sys/utsname.h>

#include <string>
#include <vector>

#include "probes/core/file_read.h"
#include "probes/core/net_dev.h"
#include "probes/core/probe.h"
#include "probes/core/text_util.h"

namespace isoprobe {

namespace {

Observation observe_network(Context&) {
  Observation o;
  Evidence ev;
  std::vector<std::string> names;
  FileRead dev = read_file_bounded("/proc/net/dev", std::size_t{256} * 1024);
  if (dev.ok()) {
    names = parse_net_dev(dev.data);
    ev.add("/proc/net/dev", dev.data);
  } else if (struct if_nameindex* idx = ::if_nameindex()) {
    for (struct if_nameindex* p = idx; p->if_index != 0 && names.size() < 4096; ++p)
      names.emplace_back(p->if_name);
    ::if_freenameindex(idx);
    ev.add_line("interfaces from if_nameindex (/proc/net/dev unreadable)");
  }
  utsname u{};
  std::string host = ::uname(&u) == 0 ? u.nodename : "";
  o.value = {{"interfaces", names}, {"hostname", host}};
  o.evidence = ev.str();
  return o;
}

}  // namespace

ProbeDescriptor network_probe() {
  return {"network", "network interfaces and hostname", std::chrono::milliseconds(1000), observe_network};
}

}  // namespace isoprobe
