#include "harness/deploy/local/run_state.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "harness/common/error.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/host_path_bind.h"
#include "harness/deploy/local/nft_rules.h"

namespace isoharness::deploy::local {
namespace fs = std::filesystem;

namespace {

bool only_chars(const std::string& s, const char* allowed) {
  return s.find_first_not_of(allowed) == std::string::npos;
}

// Field 22 of /proc/<pid>/stat: the process's start time, to tell a reused pid apart.
std::string start_time_of(long pid) {
  std::string stat = read_file_bounded("/proc/" + std::to_string(pid) + "/stat", 4096);
  auto close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 22) return field;
  }
  return "";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(line);
  return out;
}

void remove_containers(const RunPaths& paths, OciRuntime oci, CleanupReport& report) {
  const std::string root = paths.runtime_root(oci);
  if (!fs::exists(root)) return;
  const std::string runtime = oci_runtime_name(oci);
  std::string bin = find_program(runtime);
  if (bin.empty()) {
    report.problems.push_back(runtime + " state exists at " + root + " but " + runtime + " is not installed");
    return;
  }
  RunOptions opts;
  opts.deadline = 20s;
  auto listed = run_command({bin, "--root", root, "list", "--quiet"}, opts);
  std::vector<std::string> ids;
  if (listed && listed->ok()) ids = lines_of(listed->out);
  // Also every state directory, in case `list` cannot read a half-created container.
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    std::string id = e.path().filename().string();
    if (e.is_directory() && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  const std::string prefix = "ih-" + paths.run_id + "-";
  // Longest first: runsc refuses an id that is the start of another's while both exist
  // (container_id), which a run named the old way may have left.
  std::sort(ids.begin(), ids.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  for (const auto& id : ids) {
    if (id.rfind(prefix, 0) != 0) continue;  // never a container this run did not name
    if (delete_container(oci, bin, root, id))
      report.removed.push_back(runtime + " container " + id);
    else if (fs::exists(root + "/" + id))
      report.problems.push_back(runtime + " container " + id + " could not be deleted");
  }
}

void kill_namespace_processes(const std::string& ns, CleanupReport& report) {
  RunOptions opts;
  opts.deadline = 10s;
  auto pids = run_command({"ip", "netns", "pids", ns}, opts);
  if (!pids || !pids->ok()) return;
  for (const auto& p : lines_of(pids->out)) {
    long pid = std::strtol(p.c_str(), nullptr, 10);
    if (pid > 1 && pid != ::getpid() && ::kill(static_cast<pid_t>(pid), SIGKILL) == 0)
      report.removed.push_back("process " + p + " in " + ns);
  }
}

void unmount_under(const std::string& dir, CleanupReport& report) {
  const auto points = mount_points_under(dir);
  const auto left = unmount_all_under(dir);
  for (const auto& p : points)
    if (std::none_of(left.begin(), left.end(),
                     [&p](const std::string& l) { return l.rfind(p + ": ", 0) == 0; }))
      report.removed.push_back("mount " + p);
  for (const auto& l : left) report.problems.push_back("cannot unmount " + l);
}

void remove_cgroups(const std::string& run_id, CleanupReport& report) {
  const std::string prefix = "ih-" + run_id + "-";
  std::error_code ec;
  for (const auto& ctl : fs::directory_iterator("/sys/fs/cgroup", ec)) {
    std::error_code ec2;
    for (const auto& e : fs::directory_iterator(ctl.path(), ec2)) {
      std::string n = e.path().filename().string();
      if (n.rfind(prefix, 0) != 0 || !e.is_directory()) continue;
      if (::rmdir(e.path().c_str()) == 0)
        report.removed.push_back("cgroup " + e.path().string());
      else if (errno != ENOENT)
        report.problems.push_back("cannot remove cgroup " + e.path().string() + ": " + std::strerror(errno));
    }
  }
}

}  // namespace

bool valid_run_id(const std::string& id) {
  return !id.empty() && id.size() <= 8 && only_chars(id, "abcdefghijklmnopqrstuvwxyz0123456789");
}

bool valid_sandbox_name(const std::string& name) {
  return !name.empty() && name.size() <= 24 && name[0] != '-' &&
         only_chars(name, "abcdefghijklmnopqrstuvwxyz0123456789-");
}

std::string new_run_id() {
  static const char* kChars = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::string id;
  for (int i = 0; i < 8; ++i) id += kChars[rd() % 36];
  return id;
}

std::string netns_name(const std::string& run_id, const std::string& role) {
  return "ih-" + run_id + "-" + role;
}
std::string host_iface_name(const std::string& run_id) {
  return "ih-" + run_id;
}
std::string container_id(const std::string& run_id, const std::string& name) {
  // The ".c" ends every id, so that no id is the beginning of another: runsc takes an id
  // it is given as a prefix, and refuses to touch "ih-<run>-s1" while "ih-<run>-s10" or
  // "ih-<run>-s1-scorer" exists ("id is ambiguous"), which left such sandboxes running
  // until the end of the run. Names never hold a '.'.
  return "ih-" + run_id + "-" + name + ".c";
}

void claim_run(const RunPaths& paths) {
  ISOHARNESS_CHECK(valid_run_id(paths.run_id));
  std::error_code ec;
  fs::create_directories(paths.state_root, ec);
  if (ec) throw InfraError("cannot create state directory " + paths.state_root + ": " + ec.message());
  ::chmod(paths.state_root.c_str(), 0711);
  if (::mkdir(paths.dir().c_str(), 0711) != 0)
    throw InfraError(errno == EEXIST
                         ? "run " + paths.run_id + " already exists under " + paths.state_root +
                               " (remove it with `isoharness local cleanup --run " + paths.run_id + "`)"
                         : "cannot create " + paths.dir() + ": " + std::strerror(errno));
  nlohmann::json owner = {
      {"run_id", paths.run_id}, {"pid", ::getpid()}, {"start_time", start_time_of(::getpid())}};
  write_file(paths.dir() + "/run.json", owner.dump(2) + "\n", 0644);
  for (const auto& d : {paths.world_dir(), paths.dir() + "/sandboxes"})
    if (::mkdir(d.c_str(), 0711) != 0 && errno != EEXIST)
      throw InfraError("cannot create " + d + ": " + std::strerror(errno));
}

bool run_owner_alive(const RunPaths& paths) {
  auto j = nlohmann::json::parse(read_file_bounded(paths.dir() + "/run.json", 65536), nullptr, false);
  if (j.is_discarded() || !j.contains("pid") || !j["pid"].is_number_integer()) return false;
  long pid = j["pid"].get<long>();
  if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) != 0) return false;
  return start_time_of(pid) == j.value("start_time", std::string("?"));
}

std::vector<std::string> recorded_runs(const std::string& state_root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(state_root, ec)) {
    std::string id = e.path().filename().string();
    if (e.is_directory() && valid_run_id(id)) out.push_back(id);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// What a run leaves in the host's shared tables, found by name alone: its namespaces
// (processes in them first), its host veth and its host guard table. Needs no record, so
// it also removes what a run left behind after its directory was gone.
void remove_host_resources(const std::string& run_id, CleanupReport& report) {
  const std::string prefix = netns_name(run_id, "");
  std::vector<std::string> mine;
  for (const auto& ns : list_netns())
    if (ns.rfind(prefix, 0) == 0) mine.push_back(ns);
  for (const auto& ns : mine) kill_namespace_processes(ns, report);
  for (const auto& ns : mine) {
    if (run_quietly({"ip", "netns", "delete", ns}, 10s))
      report.removed.push_back("netns " + ns);
    else
      report.problems.push_back("cannot delete netns " + ns);
  }
  const std::string iface = host_iface_name(run_id);
  if (fs::exists("/sys/class/net/" + iface)) {
    if (run_quietly({"ip", "link", "delete", iface}, 10s))
      report.removed.push_back("link " + iface);
    else
      report.problems.push_back("cannot delete link " + iface);
  }
  const std::string guard = nft_table_name(run_id);
  if (run_quietly({"nft", "list", "table", "inet", guard}, 10s)) {
    if (run_quietly({"nft", "delete", "table", "inet", guard}, 10s))
      report.removed.push_back("host nftables table " + guard);
    else
      report.problems.push_back("cannot delete the host nftables table inet " + guard);
  }
}

// Run ids named by isoharness objects in the host namespace (netns "ih-<run>-<role>",
// links "ih-<run>", nftables tables "inet ih_<run>"), whether or not a record exists.
std::vector<std::string> runs_named_on_host() {
  std::vector<std::string> ids;
  auto take = [&](const std::string& id) {
    if (valid_run_id(id) && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  for (const auto& ns : list_netns())
    if (ns.rfind("ih-", 0) == 0) take(ns.substr(3, ns.find('-', 3) - 3));
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/class/net", ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("ih-", 0) == 0) take(name.substr(3));
  }
  try {
    auto tables = run_checked({"nft", "list", "tables"}, "list the host's nftables tables", 10s);
    for (const auto& line : lines_of(tables.out)) {
      const std::string lead = "table inet ih_";
      if (line.rfind(lead, 0) == 0) take(line.substr(lead.size()));
    }
  } catch (const std::exception&) {
    // No nft, or it failed: the records above still name every recorded run's table.
  }
  return ids;
}

}  // namespace

CleanupReport cleanup_run(const std::string& state_root, const std::string& run_id) {
  CleanupReport report;
  if (!valid_run_id(run_id)) {
    report.problems.push_back("not a run id: " + run_id);
    return report;
  }
  RunPaths paths{state_root, run_id};
  if (!fs::exists(paths.dir())) {
    report.problems.push_back("no run " + run_id + " recorded under " + state_root);
    return report;
  }
  remove_containers(paths, OciRuntime::runc, report);
  remove_containers(paths, OciRuntime::runsc, report);
  remove_host_resources(run_id, report);
  unmount_under(paths.dir(), report);
  remove_cgroups(run_id, report);
  if (!mount_points_under(paths.dir()).empty()) {
    // Removing the directory would go down into what is still mounted there: a staged
    // hostPath is the host's own directory.
    report.problems.push_back("kept " + paths.dir() + ": something is still mounted under it");
    return report;
  }
  std::error_code ec;
  fs::remove_all(paths.dir(), ec);
  if (ec)
    report.problems.push_back("cannot remove " + paths.dir() + ": " + ec.message());
  else
    report.removed.push_back("directory " + paths.dir());
  return report;
}

CleanupReport cleanup_all(const std::string& state_root, bool include_live) {
  CleanupReport all;
  auto merge = [&all](const CleanupReport& r) {
    all.removed.insert(all.removed.end(), r.removed.begin(), r.removed.end());
    all.problems.insert(all.problems.end(), r.problems.begin(), r.problems.end());
  };
  const auto recorded = recorded_runs(state_root);
  for (const auto& id : recorded) {
    if (!include_live && run_owner_alive(RunPaths{state_root, id})) {
      all.skipped.push_back(id);
      continue;
    }
    merge(cleanup_run(state_root, id));
  }
  // Orphans: host objects of a run whose record is gone (a crash between removing the
  // directory and the tables, or a record removed by hand). A run records itself before
  // it creates any of them, so no record means no owner. A run under another --state-dir
  // is recorded there: only names that neither this root nor the default root records are
  // taken, so cleaning with a non-default root never touches the default root's runs.
  for (const auto& id : runs_named_on_host()) {
    if (fs::exists(RunPaths{state_root, id}.dir()) || fs::exists(RunPaths{kDefaultStateRoot, id}.dir()))
      continue;
    CleanupReport r;
    remove_host_resources(id, r);
    merge(r);
  }
  return all;
}

}  // namespace isoharness::deploy::local
