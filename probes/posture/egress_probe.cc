// egress: every --target the harness named, checked at once under one deadline. There
// are no built-in targets: without --target this probe is skipped.
#include <algorithm>
#include <cmath>
#include <future>
#include <random>

#include "probes/core/datagram_egress.h"
#include "probes/core/egress.h"
#include "probes/core/file_read.h"
#include "probes/core/probe.h"
#include "probes/core/resolv_conf.h"
#include "probes/core/text_util.h"

namespace isoprobe {

namespace {

std::string drawn_nonce() {
  std::random_device rd;
  static const char* hex = "0123456789abcdef";
  std::string n;
  for (int i = 0; i < 16; ++i) n += hex[rd() % 16];
  return n;
}

// The run's nonce, and a line for the targets given their own, shorter deadline (--blocked).
void add_run_lines(const std::string& nonce, const std::vector<TargetSpec>& targets, Evidence& ev) {
  ev.add_line("nonce: " + nonce);
  std::optional<std::chrono::milliseconds> own;
  int shortened = 0;
  for (const auto& t : targets)
    if (t.deadline) own = t.deadline, ++shortened;
  if (own)
    ev.add_line(std::to_string(shortened) + " target(s) the harness expects stopped given up after " +
                std::to_string(own->count()) + " ms");
}

Observation observe_egress(Context& ctx) {
  Observation o;
  const auto& opts = ctx.options;
  if (opts.targets.empty()) {
    o.value = {{"targets", nlohmann::json::array()}, {"resolver", nullptr}};
    return o.skip("no --target given (isoprobe has no built-in targets)");
  }
  std::optional<ResolverSpec> resolver = opts.resolver;
  std::string note;
  Evidence ev;
  if (!resolver) {
    FileRead rc = read_file_bounded("/etc/resolv.conf", std::size_t{64} * 1024);
    if (!rc.ok()) {
      note = "/etc/resolv.conf unreadable (errno " + std::to_string(rc.err) + ")";
    } else {
      ResolvConf conf = parse_resolv_conf(rc.data);
      for (const auto& s : conf.skipped) ev.add_line("/etc/resolv.conf " + s);
      if (conf.nameservers.empty())
        note = "no IPv4 nameserver in /etc/resolv.conf";
      else
        resolver = ResolverSpec{conf.nameservers.front(), 53};
    }
  }
  nlohmann::json resolver_json = nullptr;
  if (resolver) resolver_json = format_ipv4(resolver->address) + ":" + std::to_string(resolver->port);
  ev.add_line("resolver: " + (resolver ? resolver_json.get<std::string>() : note));
  auto deadline = std::min(ctx.deadline - std::chrono::milliseconds(20), Clock::now() + opts.egress_deadline);
  // Connections (tcp, http, dns) and datagrams (udp, icmp, exfil) run side by side under
  // the one deadline.
  std::vector<TargetSpec> streams, datagrams;
  for (const auto& t : opts.targets) (is_datagram(t.proto) ? datagrams : streams).push_back(t);
  const std::string nonce = opts.nonce.empty() ? drawn_nonce() : opts.nonce;
  auto sent = std::async(std::launch::async, [&datagrams, &resolver, &note, &nonce, deadline] {
    return run_datagram_egress(datagrams, resolver, note, nonce, deadline);
  });
  auto outcomes = run_egress(streams, resolver, note, deadline, nonce);
  for (auto& r : sent.get()) outcomes.push_back(std::move(r));
  add_run_lines(nonce, opts.targets, ev);
  nlohmann::json targets = nlohmann::json::array();
  for (const auto& r : outcomes) {
    targets.push_back({{"name", r.name},
                       {"host", r.host},
                       {"port", r.port},
                       {"proto", r.proto},
                       {"result", r.result},
                       {"address", r.address},
                       {"elapsed_ms", std::llround(r.elapsed_ms)},
                       {"errno", r.err},
                       {"detail", r.detail}});
    if (!r.server_name.empty()) targets.back()["server_name"] = r.server_name;
    ev.add_line(r.name + " " + r.host + ":" + std::to_string(r.port) + "/" + r.proto +
                (r.server_name.empty() ? "" : "@" + r.server_name) + " -> " + r.result +
                (r.detail.empty() ? "" : " (" + r.detail + ")"));
  }
  o.value = {
      {"targets", targets}, {"resolver", resolver_json}, {"nonce", nonce}, {"sockets", socket_abilities()}};
  ev.add_line("sockets: " + o.value["sockets"].dump());
  o.evidence = ev.str();
  return o;
}

}  // namespace

ProbeDescriptor egress_probe() {
  return {"egress", "named targets: connected/refused/unreachable/timeout/dns_failed",
          std::chrono::milliseconds(30000), observe_egress, /*overlaps=*/true};
}

}  // namespace isoprobe
