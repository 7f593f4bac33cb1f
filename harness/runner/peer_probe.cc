#include "harness/runner/peer_probe.h"

#include <algorithm>
#include <random>

#include "harness/common/error.h"
#include "harness/runner/live_sandbox.h"
#include "harness/runner/sandbox_job.h"

namespace isoharness::runner {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr std::size_t kMaxAnswer = std::size_t{512} * 1024;
constexpr std::size_t kAddressesPerFamily = 2;  // tried per peer and family
constexpr auto kLeaveWait = 30s;                // a leaving sandbox waits this long for its readers

std::string head(const std::string& text, std::size_t n = 400) {
  return text.size() <= n ? text : text.substr(0, n) + "...";
}

std::string exec_text(const Expected<transport::ExecResult>& r) {
  if (!r) return "could not run: " + r.error().message;
  return "exit " + std::to_string(r->exit_code) + (r->timed_out ? " (timed out)" : "") + ", stderr '" +
         head(r->err) + "'";
}

std::string draw_hex(int digits) {
  std::random_device rd;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string n;
  for (int i = 0; i < digits; ++i) n += kHex[rd() % 16];
  return n;
}

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string target_host(const std::string& address) {
  return address.find(':') != std::string::npos ? "[" + address + "]" : address;
}

// Every connect the prober makes: each peer's first addresses of each family, on both ports.
std::vector<std::string> plan_tries(const std::vector<PeerEntry>& peers, verify::PeerObservation& o) {
  std::vector<std::string> flags;
  for (std::size_t i = 0; i < peers.size(); ++i) {
    std::vector<std::string> addresses;
    for (const auto* family : {&peers[i].ipv4, &peers[i].ipv6})
      for (std::size_t a = 0; a < family->size() && a < kAddressesPerFamily; ++a)
        addresses.push_back((*family)[a]);
    for (std::size_t a = 0; a < addresses.size(); ++a) {
      // The prober's own address (another network numbered alike) is not tried: it would
      // reach the prober itself. The check says so.
      const bool own =
          std::find(o.own_addresses.begin(), o.own_addresses.end(), addresses[a]) != o.own_addresses.end();
      for (auto port : {verify::PeerPort::ssh, verify::PeerPort::serve}) {
        const int number = port == verify::PeerPort::ssh ? verify::kPeerSshPort : verify::kPeerServePort;
        const std::string name =
            "peer" + std::to_string(i) + "-" + std::to_string(a) + "-" + std::to_string(number);
        o.tries.push_back({name, i, port, addresses[a]});
        if (!own)
          flags.push_back(name + "=" + target_host(addresses[a]) + ":" + std::to_string(number) + "/tcp");
      }
    }
  }
  return flags;
}

void run_reach(const JobContext& ctx, LiveSandbox& sandbox, const std::vector<std::string>& flags,
               verify::PeerObservation& o) {
  std::vector<std::string> argv = {kRemoteProbe,    "reach",
                                   "--nonce",       o.nonce,
                                   "--deadline-ms", std::to_string(ctx.settings.egress_deadline.count())};
  for (const auto& f : flags) argv.insert(argv.end(), {"--target", f});
  auto r = sandbox.session().exec(argv, ctx.settings.egress_deadline + 20s, kMaxAnswer);
  if (!r && ctx.reach.lost(sandbox.handle().route.jump))
    throw InfraError("the jump connection died while isoprobe reach ran: " + r.error().message);
  auto results = r && r->exit_code == 0 ? verify::parse_reach(r->out) : std::nullopt;
  o.reach_answered = results.has_value();
  if (results)
    o.results = std::move(*results);
  else
    o.reach_detail = exec_text(r) + ", stdout '" + head(r ? r->out : "") + "'";
}

// The peer's record, through a session of the harness's own into the peer.
verify::PeerServeSeen read_record(const JobContext& ctx, const PeerEntry& peer, std::int64_t after) {
  verify::PeerServeSeen none;
  auto session = ctx.reach.open(peer.route, 10s);
  if (!session) {
    none.why_not = "no session into the peer: " + session.error().message;
    return none;
  }
  auto r = session.value()->exec(
      {kRemoteProbe, "peer-record", "--after-unix-ms", std::to_string(after), "--wait-ms", "3000"}, 15s,
      kMaxAnswer);
  if (!r || r->exit_code != 0) {
    none.why_not = "peer-record: " + exec_text(r);
    return none;
  }
  return verify::parse_peer_serve(r->out);
}

// ipv4 / ipv6 string lists of an object (the serve's answer, the posture's value), bounded.
void own_addresses_of(const json& value, std::vector<std::string>& v4, std::vector<std::string>& v6) {
  for (auto [key, into] : {std::pair{"ipv4", &v4}, std::pair{"ipv6", &v6}})
    if (value.is_object() && value.contains(key) && value[key].is_array())
      for (const auto& a : value[key])
        if (a.is_string() && a.get<std::string>().size() < 64 && into->size() < 16 &&
            std::find(into->begin(), into->end(), a.get<std::string>()) == into->end())
          into->push_back(a.get<std::string>());
}

// The item's agent service as the chart names it: `default` when the values have it, else
// the first service; "" when the values name none.
std::string agent_service(const policy::PlanItem& item) {
  const json& values = item.values.get();
  if (!values.is_object() || !values.contains("services") || !values["services"].is_object()) return "";
  const json& services = values["services"];
  if (services.contains("default")) return "default";
  return services.empty() ? "" : services.begin().key();
}

json seen_json(const verify::PeerObservation& o) {
  json peers = json::array();
  for (const auto& p : o.peers)
    peers.push_back({{"name", p.name},
                     {"item_id", p.item_id},
                     {"eval_set", p.eval_set},
                     {"service", p.service},
                     {"addresses", p.addresses},
                     {"serve_seen", p.serve.read},
                     {"serve_connections", p.serve.connections.size()},
                     {"serve_note", p.serve.why_not},
                     {"separate_network", p.separate_network}});
  json tries = json::array();
  for (const auto& r : o.results)
    tries.push_back({{"target", r.name}, {"address", r.address}, {"port", r.port}, {"result", r.result}});
  return {{"nonce", o.nonce}, {"own_addresses", o.own_addresses}, {"peers", peers}, {"tries", tries}};
}

}  // namespace

std::chrono::milliseconds peer_serve_window(std::chrono::milliseconds posture_deadline) {
  return std::clamp<std::chrono::milliseconds>(posture_deadline * 2 + 120s, 60s, 30min);
}

PeerServeStart start_peer_serve(SandboxChannel& session, std::chrono::milliseconds window) {
  PeerServeStart s;
  s.window = window;
  auto r = session.exec({kRemoteProbe, "peer-serve", "--port", std::to_string(verify::kPeerServePort),
                         "--window-ms", std::to_string(window.count())},
                        20s, std::size_t{64} * 1024);
  const json ready = r && r->exit_code == 0 ? json::parse(r->out, nullptr, false) : json();
  const auto listening = ready.is_object() ? ready.find("listening") : ready.end();
  s.listening = listening != ready.end() && listening->is_boolean() && listening->get<bool>();
  s.detail = s.listening ? head(r->out) : exec_text(r);
  if (s.listening) own_addresses_of(ready, s.ipv4, s.ipv6);
  return s;
}

void own_addresses(const json& posture, std::vector<std::string>& v4, std::vector<std::string>& v6) {
  if (!posture.is_object() || !posture.contains("observations") || !posture["observations"].is_array())
    return;
  for (const auto& obs : posture["observations"]) {
    if (!obs.is_object() || obs.value("name", json()) != "addresses" || obs.value("status", json()) != "ok")
      continue;
    if (obs.contains("value")) own_addresses_of(obs["value"], v4, v6);
    return;
  }
}

void join_peer_board(const JobContext& ctx, const Job& job, LiveSandbox& sandbox, const std::string& name,
                     const PeerServeStart& serve, std::optional<BoardMembership>& membership) {
  if (!serve.listening || (serve.ipv4.empty() && serve.ipv6.empty())) return;
  ctx.peers->join({name, job.item->id, job.scenario, serve.ipv4, serve.ipv6, sandbox.handle().route,
                   agent_service(*job.item)});
  membership.emplace(ctx.peers, name, kLeaveWait);
}

PeerRecord probe_peers(const JobContext& ctx, const Job& job, LiveSandbox& sandbox, const std::string& name,
                       const json& posture, const PeerServeStart& serve) {
  PeerRecord rec;
  std::vector<std::string> v4 = serve.ipv4, v6 = serve.ipv6;
  own_addresses(posture, v4, v6);
  verify::PeerObservation o;
  o.nonce = draw_hex(16);
  o.own_addresses = v4;
  o.own_addresses.insert(o.own_addresses.end(), v6.begin(), v6.end());
  if (ctx.settings.peers_per_sandbox <= 0) {
    rec.checks = {verify::no_live_peer("no peer tried: the deployment profile's peers_per_sandbox is 0")};
    return rec;
  }
  const std::vector<PeerEntry> peers =
      ctx.peers->borrow(name, job.item->id, job.scenario, ctx.settings.peers_per_sandbox);
  const transport::SshEndpoint& jump = sandbox.handle().route.jump;
  for (const auto& p : peers) {
    verify::PeerSeen seen{p.name, p.item_id, p.eval_set, p.ipv4, {}, "", p.service};
    seen.addresses.insert(seen.addresses.end(), p.ipv6.begin(), p.ipv6.end());
    if (p.route.jump.host != jump.host || p.route.jump.port != jump.port)
      seen.separate_network = "the peer is reached through another jumphost (" + p.route.jump.host + ":" +
                              std::to_string(p.route.jump.port) + "), so it may live in another network";
    o.peers.push_back(std::move(seen));
  }
  try {
    if (!peers.empty()) {
      run_reach(ctx, sandbox, plan_tries(peers, o), o);
      std::int64_t after = unix_ms();
      for (const auto& r : o.results) after = std::max(after, r.ended_unix_ms);
      for (std::size_t i = 0; i < peers.size(); ++i) o.peers[i].serve = read_record(ctx, peers[i], after);
    }
  } catch (...) {
    ctx.peers->give_back(peers);
    throw;
  }
  ctx.peers->give_back(peers);
  rec.checks = verify::verify_peers(o);
  verify::accept_risks(rec.checks, ctx.settings.accepted_risks);
  rec.summary = seen_json(o);
  rec.summary["serve"] = {
      {"listening", serve.listening}, {"detail", serve.detail}, {"window_ms", serve.window.count()}};
  return rec;
}

}  // namespace isoharness::runner
