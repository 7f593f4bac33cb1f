// The hawk backend's drop-point witness: Cilium Hubble flows (the profile's hubble:
// section, docs/CONTRACTS.md §4.6), read after each probe run from a command the profile
// names (an argv, no shell, one deadline, bounded output; the harness appends the window as
// --since/--until) or from a file of exported flows (bounded read). The sandbox is known
// to Hubble by its pod's address (the ssh-command line's, when it is an address) or its pod
// name and namespace (from `hawk status`). Flows that cannot be read or do not cover the
// window make the view incomplete: nothing is judged on them.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <ctime>
#include <fstream>

#include "harness/common/subprocess.h"
#include "harness/deploy/hawk/hawk_backend.h"
#include "harness/deploy/hawk/hubble_flows.h"

namespace isoharness::deploy::hawk {
namespace {

bool is_address_of(const std::string& s, int family) {
  unsigned char buf[sizeof(in6_addr)] = {};
  return ::inet_pton(family, s.c_str(), buf) == 1;
}

// unix ms as RFC 3339 in UTC with milliseconds: "2026-12-03T14:05:06.789Z".
std::string rfc3339(long long ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char text[32] = {};
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", text, static_cast<int>(ms % 1000));
}

// At most max_bytes + 1 bytes of a file (one more than allowed shows it is too large).
Expected<std::string> read_flow_file(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot open " + path);
  std::string text(max_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (in.bad()) return make_error("cannot read " + path);
  return text;
}

DropView unreadable_drop_view(const std::string& who, const std::string& why) {
  DropView view;
  view.witness = who;
  view.complete = false;
  view.note = why;
  return view;
}

}  // namespace

FlowSubject HawkBackend::flow_subject(const SandboxHandle& handle) {
  FlowSubject s;
  const std::string& host = handle.route.sandbox.host;
  if (is_address_of(host, AF_INET)) s.address = host;
  if (is_address_of(host, AF_INET6)) s.address6 = host;
  if (const auto& pod = handle.facts.sandbox_pod) {
    s.pod_name = pod->name;
    s.namespace_ = pod->namespace_;
  }
  return s;
}

// The flows' text: the command's output or the file's contents, bounded. A command is asked
// after the window closed, so it covers the end by itself; a file must show that it does
// (select_drops' need_end).
Expected<std::string> HawkBackend::hubble_text(long long from_ms, long long to_ms) const {
  const auto& h = *profile_.hubble;
  if (!h.file.empty()) {
    auto text = read_flow_file(h.file, h.max_bytes);
    if (text && text->size() > h.max_bytes)
      return make_error(fmt::format("{} is larger than the harness reads ({} bytes)", h.file, h.max_bytes));
    return text;
  }
  std::vector<std::string> argv = h.command;
  argv.insert(argv.end(), {"--since", rfc3339(from_ms - h.lead_s * 1000LL), "--until", rfc3339(to_ms)});
  RunOptions run;
  run.deadline = std::chrono::seconds(h.timeout_s);
  run.max_output = h.max_bytes;
  auto got = options_.runner ? options_.runner(argv, run) : run_command(argv, run);
  if (!got) return make_error("could not run " + render_argv(argv) + ": " + got.error().message);
  if (got->out_truncated)
    return make_error(fmt::format("{} printed more than the harness reads ({} bytes)", argv[0], h.max_bytes));
  if (!got->ok()) return make_error(render_argv(argv) + " failed: " + got->describe());
  return std::move(got->out);
}

DropView HawkBackend::hubble_drops(const SandboxHandle& handle, long long from_ms, long long to_ms,
                                   long long slack_ms) const {
  const auto& h = *profile_.hubble;
  const std::string who = h.file.empty() ? "hubble (" + render_argv(h.command) + ")"
                                         : "hubble (flows exported to " + h.file + ")";
  const FlowSubject subject = flow_subject(handle);
  if (subject.address.empty() && subject.address6.empty() && subject.pod_name.empty())
    return unreadable_drop_view(
        who,
        "the sandbox has no pod address or pod name to find its flows by (ssh-command named "
        "'" +
            handle.route.sandbox.host + "', hawk status named no sandbox pod)");
  auto text = hubble_text(from_ms, to_ms);
  if (!text) return unreadable_drop_view(who, "the Hubble flows could not be read: " + text.error().message);
  const HubbleFlows flows = parse_hubble_flows(*text, {.max_bytes = h.max_bytes, .max_lines = h.max_lines});
  DropView view = select_drops(flows, subject, options_.targets, from_ms, to_ms, !h.file.empty(), slack_ms);
  view.witness = who;
  return view;
}

}  // namespace isoharness::deploy::hawk
