#include "harness/deploy/witness_log.h"

#include <charconv>

namespace isoharness::deploy {
namespace {

std::vector<std::string_view> witness_fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos < line.size() && out.size() < 9) {
    std::size_t sp = line.find(' ', pos);
    if (sp == std::string_view::npos) sp = line.size();
    out.push_back(line.substr(pos, sp - pos));
    pos = sp + 1;
  }
  return out;
}

bool witness_number(std::string_view text, long long& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && out >= 0;
}

bool witness_kind_known(std::string_view k) {
  return k == "tcp-syn" || k == "udp" || k == "icmp-echo" || k == "dns" || k == "ready" || k == "full";
}

std::string witness_field_text(std::string_view v) {
  return v == "-" ? std::string() : std::string(v.substr(0, 253));
}

}  // namespace

WitnessLog parse_witness_log(std::string_view text) {
  WitnessLog log;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) break;  // a line still being written: not yet a record
    const std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    const auto f = witness_fields(line);
    long long ms = 0, port = 0;
    if (f.size() != 8 || f[0] != "W1" || !witness_number(f[1], ms) || !witness_kind_known(f[2]) ||
        !witness_number(f[5], port) || port > 65535) {
      ++log.malformed;
      continue;
    }
    if (f[2] == "ready") {
      log.ready = true;
      continue;
    }
    if (f[2] == "full") {
      log.full_since_ms = ms;
      continue;
    }
    log.records.push_back(WitnessRecord{ms, std::string(f[2]), std::string(f[3]), std::string(f[4]),
                                        static_cast<int>(port), witness_field_text(f[6]),
                                        witness_field_text(f[7])});
  }
  return log;
}

WitnessView select_witness_records(const WitnessLog& log, const std::string& source,
                                   const std::string& source6, const std::string& nonce, long long from_ms,
                                   long long to_ms) {
  WitnessView view;
  view.source = source;
  view.source6 = source6;
  view.nonce = nonce;
  for (const auto& r : log.records) {
    if (r.unix_ms < from_ms || r.unix_ms > to_ms) continue;
    if ((!source.empty() && r.source == source) || (!source6.empty() && r.source == source6) ||
        (!nonce.empty() && r.nonce == nonce))
      view.records.push_back(r);
  }
  if (!log.ready) {
    view.complete = false;
    view.note = "the witness log has no start line";
  } else if (log.full_since_ms >= 0 && log.full_since_ms <= to_ms) {
    view.complete = false;
    view.note = "the witness log reached its line cap before the probe ended";
  }
  return view;
}

}  // namespace isoharness::deploy
