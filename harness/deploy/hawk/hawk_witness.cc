// The hawk backend's outside witness: the one the deployment's operator runs (the profile's
// witness: section, docs/CONTRACTS.md §4.4). Its log is the local world's format
// (harness/deploy/witness_log.h), read over HTTP after each probe run; the sandbox is known
// to it by the address its ssh-command line names (TCP) and by the probe's nonce (UDP, ICMP,
// DNS). A log that cannot be read, or is larger than the bound, is not judged on: the
// checks fall back to the sandbox's report and say why.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <thread>

#include "harness/deploy/hawk/hawk_backend.h"
#include "harness/deploy/hawk/witness_http.h"
#include "harness/deploy/witness_log.h"

namespace isoharness::deploy::hawk {
namespace {

bool is_ipv4(const std::string& s) {
  in_addr a{};
  return ::inet_pton(AF_INET, s.c_str(), &a) == 1;
}

long long unix_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

WitnessView unreadable(const std::string& who, const std::string& nonce, const std::string& why) {
  WitnessView view;
  view.witness = who;
  view.nonce = nonce;
  view.complete = false;
  view.note = why;
  return view;
}

}  // namespace

WitnessView HawkBackend::arrival_view(const SandboxHandle& handle, const std::string& nonce,
                                      long long from_ms, long long to_ms) const {
  const auto& w = *profile_.witness;
  const std::string host = w.log_host == "jumphost" ? handle.route.jump.host : w.log_host;
  const std::string url = fmt::format("http://{}:{}{}", host, w.log_port, w.log_path);
  const std::string who =
      fmt::format("the operator's witness (canary {}{}{}; log {})", w.canary,
                  w.canary6.empty() ? "" : ", " + w.canary6, w.zone.empty() ? "" : ", zone " + w.zone, url);
  if (!is_ipv4(host))
    return unreadable(who, nonce, "the witness log's host '" + host + "' is not an IPv4 address");
  auto got =
      http_get_bounded(host, w.log_port, w.log_path, w.max_log_bytes, std::chrono::seconds(w.log_timeout_s));
  if (!got)
    return unreadable(who, nonce,
                      "the witness log could not be read from " + url + ": " + got.error().message);
  // TCP carries no nonce: the witness knows the sandbox by the address its ssh-command names.
  const std::string& sandbox = handle.route.sandbox.host;
  WitnessView view = select_witness_records(parse_witness_log(got->body), is_ipv4(sandbox) ? sandbox : "", "",
                                            nonce, from_ms, to_ms);
  view.witness = who;
  if (got->truncated) {
    view.complete = false;
    view.note = fmt::format("the witness log is larger than the harness reads ({} bytes)", w.max_log_bytes);
  }
  return view;
}

std::optional<WitnessView> HawkBackend::witness(const SandboxHandle& handle, const std::string& nonce,
                                                std::chrono::system_clock::time_point from,
                                                std::chrono::system_clock::time_point to) const {
  if (!profile_.witness && !profile_.hubble) return std::nullopt;
  const int slack_ms = profile_.witness ? profile_.witness->clock_slack_ms : kDefaultClockSlackMs;
  const long long from_ms = unix_ms(from) - slack_ms;
  const long long to_ms = unix_ms(to) + slack_ms;
  // What the probe sent last may still be on its way; let the witnesses record it.
  const int settle_ms = profile_.witness ? profile_.witness->settle_ms : kDefaultSettleMs;
  std::this_thread::sleep_for(std::chrono::milliseconds(settle_ms));
  WitnessView view =
      profile_.witness
          ? arrival_view(handle, nonce, from_ms, to_ms)
          : unreadable("no arrival witness", nonce,
                       "the profile names no operator witness (witness:): arrivals are not observed");
  if (profile_.hubble) view.drops = hubble_drops(handle, from_ms, to_ms);
  return view;
}

}  // namespace isoharness::deploy::hawk
