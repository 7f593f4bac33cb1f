// identity: user and group ids, supplementary groups and the user-namespace id maps.
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "probes/core/file_read.h"
#include "probes/core/id_map.h"
#include "probes/core/probe.h"
#include "probes/core/text_util.h"

namespace isoprobe {

namespace {

nlohmann::json map_json(const IdMap& m) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : m.ranges) out.push_back({r[0], r[1], r[2]});
  return out;
}

Observation observe_identity(Context&) {
  Observation o;
  Evidence ev;
  std::vector<gid_t> groups(4096);
  int n = ::getgroups(static_cast<int>(groups.size()), groups.data());
  if (n < 0) return o.fail("getgroups failed", errno);
  groups.resize(static_cast<std::size_t>(n));
  FileRead uid_map = read_file_bounded("/proc/self/uid_map", std::size_t{64} * 1024);
  FileRead gid_map = read_file_bounded("/proc/self/gid_map", std::size_t{64} * 1024);
  IdMap um = uid_map.ok() ? parse_id_map(uid_map.data) : IdMap{};
  IdMap gm = gid_map.ok() ? parse_id_map(gid_map.data) : IdMap{};
  ev.add("uid_map", uid_map.ok() ? uid_map.data : "unreadable: errno " + std::to_string(uid_map.err));
  ev.add("gid_map", gid_map.ok() ? gid_map.data : "unreadable: errno " + std::to_string(gid_map.err));
  for (const auto& p : um.problems) ev.add_line("uid_map " + p);
  o.value = {{"uid", ::getuid()},       {"euid", ::geteuid()},
             {"gid", ::getgid()},       {"egid", ::getegid()},
             {"groups", groups},        {"uid_map", map_json(um)},
             {"gid_map", map_json(gm)}, {"initial_user_namespace", um.is_identity()}};
  if (!uid_map.ok()) o.err = uid_map.err;
  o.evidence = ev.str();
  return o;
}

}  // namespace

ProbeDescriptor identity_probe() {
  return {"identity", "uid/gid, groups and uid_map", std::chrono::milliseconds(1000), observe_identity};
}

}  // namespace isoprobe
