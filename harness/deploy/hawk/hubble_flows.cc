#include "harness/deploy/hawk/hubble_flows.h"

#include <fmt/format.h>

#include <array>
#include <ctime>
#include <nlohmann/json.hpp>

namespace isoharness::deploy::hawk {
namespace {

using nlohmann::json;

// Typed readers: a missing key or a value of another type reads as empty, never throws.
const json* member(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::string text_at(const json& obj, const char* key) {
  const json* v = member(obj, key);
  if (!v || !v->is_string()) return "";
  const auto& s = v->get_ref<const std::string&>();
  return s.size() > kMaxFlowField ? s.substr(0, kMaxFlowField) : s;
}

long long integer_at(const json& obj, const char* key) {
  const json* v = member(obj, key);
  if (!v) return 0;
  if (v->is_number_integer()) return v->get<long long>();
  if (v->is_number_unsigned())
    return static_cast<long long>(v->get<unsigned long long>() & 0x7fffffffffffffffULL);
  return 0;
}

bool bool_at(const json& obj, const char* key) {
  const json* v = member(obj, key);
  return v && v->is_boolean() && v->get<bool>();
}

const json& object_at(const json& obj, const char* key) {
  static const json empty = json::object();
  const json* v = member(obj, key);
  return v && v->is_object() ? *v : empty;
}

FlowEndpoint read_endpoint(const json& e) {
  FlowEndpoint out;
  out.pod_name = text_at(e, "pod_name");
  out.namespace_ = text_at(e, "namespace");
  out.identity = integer_at(e, "identity");
  const json* labels = member(e, "labels");
  if (labels && labels->is_array())
    for (const auto& l : *labels) {
      if (out.labels.size() >= kMaxFlowLabels) break;
      if (l.is_string()) out.labels.push_back(l.get<std::string>().substr(0, kMaxFlowField));
    }
  return out;
}

void read_l4(const json& l4, HubbleFlow& f) {
  if (const json& tcp = object_at(l4, "TCP"); member(l4, "TCP") && tcp.is_object() && !tcp.empty()) {
    f.proto = "tcp";
    f.destination_port = static_cast<int>(integer_at(tcp, "destination_port"));
  } else if (const json& udp = object_at(l4, "UDP"); !udp.empty()) {
    f.proto = "udp";
    f.destination_port = static_cast<int>(integer_at(udp, "destination_port"));
  } else if (member(l4, "ICMPv4")) {
    f.proto = "icmp";
  } else if (member(l4, "ICMPv6")) {
    f.proto = "icmp6";
  }
  if (f.destination_port < 0 || f.destination_port > 65535) f.destination_port = 0;
}

HubbleFlow read_flow(const json& f) {
  HubbleFlow out;
  out.unix_ms = parse_rfc3339_ms(text_at(f, "time"));
  out.verdict = flow_verdict_from(text_at(f, "verdict"));
  out.drop_reason = text_at(f, "drop_reason_desc");
  const json& ip = object_at(f, "IP");
  out.source_ip = text_at(ip, "source");
  out.destination_ip = text_at(ip, "destination");
  out.ip_version = text_at(ip, "ipVersion");
  read_l4(object_at(f, "l4"), out);
  out.source = read_endpoint(object_at(f, "source"));
  out.destination = read_endpoint(object_at(f, "destination"));
  out.traffic_direction = text_at(f, "traffic_direction");
  // is_reply is a BoolValue: absent when unknown, `true`/`false` otherwise.
  out.is_reply = bool_at(f, "is_reply");
  out.type = text_at(f, "Type");
  out.node_name = text_at(f, "node_name");
  return out;
}

// The flow of one line: the CLI's envelope's "flow", or the line itself when it is a flow
// (it has a verdict or a time and an IP or l4 section). nullptr: not a flow.
const json* flow_of(const json& line) {
  if (const json* f = member(line, "flow")) return f->is_object() ? f : nullptr;
  if ((member(line, "verdict") || member(line, "time")) && (member(line, "IP") || member(line, "l4")))
    return &line;
  return nullptr;
}

void take_line(std::string_view line, HubbleFlows& out) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  json doc = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    ++out.malformed;
    return;
  }
  if (member(doc, "lost_events")) {
    ++out.lost_events;
    return;
  }
  const json* f = flow_of(doc);
  if (!f) {
    ++out.other;
    return;
  }
  HubbleFlow flow = read_flow(*f);
  if (flow.node_name.empty()) flow.node_name = text_at(doc, "node_name");
  if (flow.unix_ms >= 0) {
    out.first_ms = out.first_ms < 0 ? flow.unix_ms : std::min(out.first_ms, flow.unix_ms);
    out.last_ms = std::max(out.last_ms, flow.unix_ms);
  }
  out.flows.push_back(std::move(flow));
}

bool digits(std::string_view s, std::size_t at, std::size_t n, int& out) {
  if (at + n > s.size()) return false;
  out = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

// The milliseconds of a fraction ".123456789" at s[at], and where it ends.
int fraction_ms(std::string_view s, std::size_t& at) {
  int ms = 0;
  std::size_t n = 0;
  if (at < s.size() && s[at] == '.')
    for (++at; at < s.size() && s[at] >= '0' && s[at] <= '9'; ++at, ++n)
      if (n < 3) ms = ms * 10 + (s[at] - '0');
  for (; n > 0 && n < 3; ++n) ms *= 10;
  return ms;
}

// The offset from UTC in seconds at s[at] ("Z", "+hh:mm", "-hh:mm"), or false.
bool utc_offset(std::string_view s, std::size_t at, long long& seconds) {
  if (at + 1 == s.size() && (s[at] == 'Z' || s[at] == 'z')) return (seconds = 0), true;
  int hh = 0, mm = 0;
  if (at + 6 != s.size() || (s[at] != '+' && s[at] != '-') || s[at + 3] != ':') return false;
  if (!digits(s, at + 1, 2, hh) || !digits(s, at + 4, 2, mm) || hh > 23 || mm > 59) return false;
  seconds = (s[at] == '-' ? -1 : 1) * (hh * 3600LL + mm * 60LL);
  return true;
}

bool from_subject(const HubbleFlow& f, const FlowSubject& who) {
  if (!who.address.empty() && f.source_ip == who.address) return true;
  if (!who.address6.empty() && f.source_ip == who.address6) return true;
  return !who.pod_name.empty() && f.source.pod_name == who.pod_name && f.source.namespace_ == who.namespace_;
}

// The transport a target's packets use, as Hubble names it in l4.
std::string_view transport_of(const std::string& target_proto) {
  if (target_proto == "tcp" || target_proto == "tls" || target_proto.starts_with("http")) return "tcp";
  if (target_proto == "udp" || target_proto == "dns") return "udp";
  if (target_proto == "icmp") return "icmp";
  return "";
}

// The one target whose packets the flow is; "" when none or several are (metadata asked
// three ways on one port): then the verdict rule matches the packet against each.
std::string way_out_of(const HubbleFlow& f, const std::vector<EgressTarget>& targets) {
  std::string found;
  for (const auto& t : targets) {
    if (f.destination_ip.empty() || (t.host != f.destination_ip && t.witness_address != f.destination_ip))
      continue;
    const std::string_view want = transport_of(t.proto);
    const bool icmp = f.proto == "icmp" || f.proto == "icmp6";
    if (!(icmp ? want == "icmp" : (want == f.proto && t.port == f.destination_port))) continue;
    if (!found.empty()) return "";
    found = t.name;
  }
  return found;
}

// Why the flows cannot be judged on for [from_ms, to_ms]; "" when they can.
std::string coverage_gap(const HubbleFlows& flows, long long from_ms, long long to_ms, bool need_end) {
  if (flows.truncated)
    return "the flows went past the harness's bound (bytes or lines); the rest was not read";
  if (flows.lost_events > 0)
    return fmt::format("Hubble reported {} lost-events record(s): flows of the window may be missing",
                       flows.lost_events);
  if (flows.first_ms < 0) return "no flow with a readable time: the flows do not cover the probe's window";
  if (flows.first_ms > from_ms)
    return fmt::format("the flows start {} ms after the probe's window opened", flows.first_ms - from_ms);
  if (need_end && flows.last_ms < to_ms)
    return fmt::format("the flows end {} ms before the probe's window closed", to_ms - flows.last_ms);
  return "";
}

}  // namespace

DropView select_drops(const HubbleFlows& flows, const FlowSubject& subject,
                      const std::vector<EgressTarget>& targets, long long from_ms, long long to_ms,
                      bool need_end, long long cover_slack_ms) {
  DropView view;
  view.witness = "hubble";
  for (const auto& f : flows.flows) {
    if (f.unix_ms < from_ms || f.unix_ms > to_ms || f.is_reply || f.traffic_direction == "INGRESS" ||
        !from_subject(f, subject))
      continue;
    const bool dropped = f.verdict == FlowVerdict::kDropped && policy_denied(f.drop_reason);
    if (!dropped && f.verdict != FlowVerdict::kForwarded) continue;
    DropRecord r;
    r.unix_ms = f.unix_ms;
    r.proto = f.proto;
    r.source = f.source_ip;
    r.destination = f.destination_ip;
    r.port = f.destination_port;
    r.dropped = dropped;
    r.reason = dropped ? f.drop_reason : "FORWARDED";
    r.way_out = way_out_of(f, targets);
    view.records.push_back(std::move(r));
  }
  view.note = coverage_gap(flows, from_ms + cover_slack_ms, to_ms - cover_slack_ms, need_end);
  view.complete = view.note.empty();
  return view;
}

FlowVerdict flow_verdict_from(std::string_view word) {
  static constexpr std::array<std::pair<std::string_view, FlowVerdict>, 7> kWords{{
      {"FORWARDED", FlowVerdict::kForwarded},
      {"DROPPED", FlowVerdict::kDropped},
      {"ERROR", FlowVerdict::kError},
      {"AUDIT", FlowVerdict::kAudit},
      {"REDIRECTED", FlowVerdict::kRedirected},
      {"TRACED", FlowVerdict::kTraced},
      {"TRANSLATED", FlowVerdict::kTranslated},
  }};
  for (const auto& [w, v] : kWords)
    if (w == word) return v;
  return FlowVerdict::kUnknown;
}

long long parse_rfc3339_ms(std::string_view s) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!digits(s, 0, 4, year) || s.size() < 20 || s[4] != '-' || !digits(s, 5, 2, month) || s[7] != '-' ||
      !digits(s, 8, 2, day) || (s[10] != 'T' && s[10] != 't') || !digits(s, 11, 2, hour) || s[13] != ':' ||
      !digits(s, 14, 2, minute) || s[16] != ':' || !digits(s, 17, 2, second))
    return -1;
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 ||
      second > 60)
    return -1;
  std::size_t at = 19;
  const int ms = fraction_ms(s, at);
  long long offset = 0;
  if (!utc_offset(s, at, offset)) return -1;
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const long long epoch = static_cast<long long>(::timegm(&tm));
  return (epoch - offset) * 1000 + ms;
}

HubbleFlows parse_hubble_flows(std::string_view text, const HubbleLimits& limits) {
  HubbleFlows out;
  if (text.size() > limits.max_bytes) {
    text = text.substr(0, limits.max_bytes);
    out.truncated = true;
  }
  std::size_t lines = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    // A last line without its newline may have been cut mid-way: read it only when whole.
    if (nl == std::string_view::npos && out.truncated) break;
    if (++lines > limits.max_lines) {
      out.truncated = true;
      break;
    }
    take_line(text.substr(0, nl), out);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return out;
}

bool policy_denied(std::string_view reason) {
  return reason == "POLICY_DENIED" || reason == "POLICY_DENY";
}

}  // namespace isoharness::deploy::hawk
