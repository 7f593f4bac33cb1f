#include "harness/deploy/local/up_record.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "harness/common/error.h"
#include "harness/common/json_read.h"
#include "harness/deploy/local/host_ops.h"

namespace isoharness::deploy::local {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxUpRecordBytes = std::size_t{64} * 1024;
constexpr std::size_t kMaxUpRecordContainers = 64;

json up_endpoint_json(const transport::SshEndpoint& e) {
  return {{"host", e.host}, {"port", e.port}, {"user", e.user}, {"host_key", e.host_key}};
}

std::optional<transport::SshEndpoint> up_endpoint_of(const json& doc, const char* key) {
  const json* m = common::json_member(doc, key);
  if (!m || !m->is_object()) return std::nullopt;
  auto host = common::json_string(*m, "host");
  auto port = common::json_int(*m, "port");
  auto user = common::json_string(*m, "user");
  if (!host || host->empty() || !port || *port <= 0 || *port > 65535 || !user) return std::nullopt;
  return transport::SshEndpoint{*host, static_cast<int>(*port), *user,
                                common::json_string_or(*m, "host_key")};
}

// The same endpoint: host, port and user equal, and no pinned key differing.
bool up_same_endpoint(const transport::SshEndpoint& asked, const transport::SshEndpoint& recorded) {
  if (asked.host != recorded.host || asked.port != recorded.port || asked.user != recorded.user) return false;
  return asked.host_key.empty() || recorded.host_key.empty() || asked.host_key == recorded.host_key;
}

std::vector<std::string> up_record_files(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) out.push_back(n);
    if (out.size() >= 4096) break;
  }
  ::closedir(d);
  return out;
}

}  // namespace

std::string up_records_dir(const RunPaths& paths) {
  return paths.dir() + "/up/sandboxes";
}

json to_json(const UpRecord& r) {
  json containers = json::array();
  for (const auto& c : r.containers) containers.push_back({{"service", c.service}, {"id", c.id}});
  return {{"run_id", r.run_id},
          {"name", r.name},
          {"jump", up_endpoint_json(r.route.jump)},
          {"sandbox", up_endpoint_json(r.route.sandbox)},
          {"containers", containers},
          {"world",
           {{"address", r.world.address},
            {"address6", r.world.address6},
            {"egress_index", r.world.egress_index ? json(*r.world.egress_index) : json()}}}};
}

std::optional<UpRecord> parse_up_record(const std::string& text, std::string& why) {
  if (text.size() > kMaxUpRecordBytes) {
    why = "larger than a record";
    return std::nullopt;
  }
  const json doc = json::parse(text, nullptr, false);
  UpRecord r;
  auto run = common::json_string(doc, "run_id");
  auto name = common::json_string(doc, "name");
  auto jump = up_endpoint_of(doc, "jump");
  auto sandbox = up_endpoint_of(doc, "sandbox");
  const json* containers = common::json_member(doc, "containers");
  if (!run || !valid_run_id(*run) || !name || !valid_sandbox_name(*name) || !jump || !sandbox ||
      !containers || !containers->is_array() || containers->empty() ||
      containers->size() > kMaxUpRecordContainers) {
    why = "not a `local up` sandbox record";
    return std::nullopt;
  }
  r.run_id = *run;
  r.name = *name;
  r.route = {*jump, *sandbox};
  for (const auto& c : *containers) {
    auto service = common::json_string(c, "service");
    auto id = common::json_string(c, "id");
    // Only ids of this run's own naming (container_id): nothing else is asked of a runtime.
    const std::string prefix = "ih-" + r.run_id + "-";
    if (!service || service->empty() || service->size() > 253 || !id || id->rfind(prefix, 0) != 0 ||
        id->size() < prefix.size() + 3 || id->compare(id->size() - 2, 2, ".c") != 0 ||
        !valid_sandbox_name(id->substr(prefix.size(), id->size() - prefix.size() - 2))) {
      why = "a container of the record is not one of run " + r.run_id + "'s";
      return std::nullopt;
    }
    r.containers.push_back({*service, *id});
  }
  // The world's view of it: optional (a record without one gets no witness).
  if (const json* world = common::json_member(doc, "world"); world && world->is_object()) {
    r.world.address = common::json_string_or(*world, "address").substr(0, 64);
    r.world.address6 = common::json_string_or(*world, "address6").substr(0, 64);
    if (auto i = common::json_int(*world, "egress_index"); i && *i >= 0 && *i < 4096)
      r.world.egress_index = static_cast<int>(*i);
  }
  if (r.containers.front().service != "default") {
    why = "the record's first container is not the agent's (service default)";
    return std::nullopt;
  }
  return r;
}

void write_up_record(const RunPaths& paths, const UpRecord& record) {
  const std::string up = paths.dir() + "/up", dir = up_records_dir(paths);
  for (const auto& d : {up, dir})
    if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST)
      throw InfraError("cannot create " + d + ": " + std::strerror(errno));
  const std::string path = dir + "/" + record.name + ".json", tmp = path + ".tmp";
  write_file(tmp, to_json(record).dump() + "\n", 0644);
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    throw InfraError("cannot write " + path + ": " + std::strerror(errno));
}

void remove_up_record(const RunPaths& paths, const std::string& name) noexcept {
  ::unlink((up_records_dir(paths) + "/" + name + ".json").c_str());
}

UpSandboxFound find_up_sandbox(const std::string& state_root, const transport::SshRoute& route) {
  UpSandboxFound found;
  std::vector<UpRecord> matches;
  for (const auto& run : recorded_runs(state_root)) {
    const RunPaths paths{state_root, run};
    if (!run_owner_alive(paths)) continue;
    const std::string dir = up_records_dir(paths);
    for (const auto& file : up_record_files(dir)) {
      std::string why;
      auto r = parse_up_record(read_file_bounded(dir + "/" + file, kMaxUpRecordBytes + 1), why);
      if (!r || r->run_id != run || file != r->name + ".json") continue;
      if (up_same_endpoint(route.jump, r->route.jump) && up_same_endpoint(route.sandbox, r->route.sandbox))
        matches.push_back(std::move(*r));
    }
  }
  const std::string where = route.sandbox.user + "@" + route.sandbox.host + ":" +
                            std::to_string(route.sandbox.port) + " behind " + route.jump.host + ":" +
                            std::to_string(route.jump.port);
  if (matches.size() == 1) {
    found.record = std::move(matches.front());
    found.note = where + " is sandbox " + found.record->name + " of `local up` run " + found.record->run_id +
                 " (" + state_root + ")";
  } else if (matches.empty()) {
    found.note = "no live `local up` run under " + state_root + " holds " + where;
  } else {
    found.note = std::to_string(matches.size()) + " live `local up` sandboxes under " + state_root +
                 " match " + where + ": none is taken";
  }
  return found;
}

ContainerRef run_container_ref(const RunPaths& paths, const std::string& id, const std::string& service) {
  return ContainerRef{id,
                      service,
                      find_program("runc"),
                      paths.runtime_root(OciRuntime::runc),
                      find_program("runsc"),
                      paths.runtime_root(OciRuntime::runsc)};
}

std::vector<ContainerRef> container_refs(const std::string& state_root, const UpRecord& record) {
  std::vector<ContainerRef> refs;
  const RunPaths paths{state_root, record.run_id};
  for (const auto& c : record.containers) refs.push_back(run_container_ref(paths, c.id, c.service));
  return refs;
}

}  // namespace isoharness::deploy::local
