// bpf: can this sandbox reach the kernel's eBPF (the verifier bugs of the host-and-kernel
// escape class)? It reads kernel.unprivileged_bpf_disabled and asks bpf(2) for the
// smallest map there is (an array of one 4-byte value), which it closes at once: a map
// holds no program and is freed with its descriptor, so the kernel is left as it was.
// Also read, for the record: net.ipv4.conf.all.route_localnet of the sandbox's network
// namespace (1 lets 127.0.0.0/8 be routed, the route_localnet class).
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "probes/core/file_read.h"
#include "probes/core/probe.h"
#include "probes/core/probe_support.h"
#include "probes/core/text_util.h"

namespace isoprobe {

namespace {

// -1 when the file cannot be read or is not a number.
long long read_number(const char* path, Evidence& ev) {
  FileRead f = read_file_bounded(path, 64);
  if (!f.ok()) {
    ev.add_line(std::string(path) + ": " + errno_name(f.err));
    return -1;
  }
  ev.add_line(std::string(path) + ": " + std::string(trim(f.data)));
  auto v = parse_i64(trim(f.data));
  return v ? *v : -1;
}

// 0 when a map was created (and closed), else the errno.
int try_map_create() {
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.map_type = BPF_MAP_TYPE_ARRAY;
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = 1;
  long fd = ::syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
  if (fd < 0) return errno;
  ::close(static_cast<int>(fd));
  return 0;
}

Observation observe_bpf(Context&) {
  Observation o;
  Evidence ev;
  const long long disabled = read_number("/proc/sys/kernel/unprivileged_bpf_disabled", ev);
  const long long localnet = read_number("/proc/sys/net/ipv4/conf/all/route_localnet", ev);
  const int err = try_map_create();
  ev.add_line(std::string("bpf(BPF_MAP_CREATE, array of 1): ") +
              (err == 0 ? "created, closed" : errno_name(err)));
  o.value = {{"unprivileged_bpf_disabled", disabled},
             {"map_created", err == 0},
             {"map_errno", err},
             {"route_localnet", localnet}};
  o.evidence = ev.str();
  return o;
}

}  // namespace

ProbeDescriptor bpf_probe() {
  return {"bpf", "kernel.unprivileged_bpf_disabled, a bpf() map created and closed, route_localnet",
          std::chrono::milliseconds(1000), observe_bpf};
}

}  // namespace isoprobe
