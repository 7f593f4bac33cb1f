#include "harness/deploy/witness_log.h"

#include <algorithm>
#include <charconv>
#include <thread>

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
  return k == "tcp-syn" || k == "tcp-data" || k == "udp" || k == "icmp-echo" || k == "dns" || k == "ready" ||
         k == "full" || k == "heartbeat" || k == "quota";
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
    if (f[2] == "ready" || f[2] == "heartbeat") {
      log.ready = log.ready || f[2] == "ready";
      log.heartbeats.push_back(ms);
      continue;
    }
    if (f[2] == "quota") {
      log.quotas.emplace_back(witness_field_text(f[3]), ms);
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
  for (const auto& [who, since] : log.quotas) {
    if (!view.complete || since > to_ms || who.empty() || (who != source && who != source6)) continue;
    view.complete = false;
    view.note =
        "the witness stopped logging " + who + " (its share of the log ran out) before the probe ended";
  }
  return view;
}

std::string heartbeat_gap(const WitnessLog& log, long long from_ms, long long to_ms) {
  long long last = -1;  // the latest heartbeat at or before the point reached so far
  for (long long beat : log.heartbeats) {
    if (beat <= from_ms) {
      last = std::max(last, beat);
      continue;
    }
    if (last < 0) return "the witness has no heartbeat before the probe started";
    if (beat - last > kMaxHeartbeatGapMs)
      return "the witness was silent from " + std::to_string(last) + " to " + std::to_string(beat) + " ms";
    last = beat;
    if (beat >= to_ms) return "";
  }
  if (last < 0) return "the witness has no heartbeat before the probe started";
  return "the witness's last heartbeat (" + std::to_string(last) +
         " ms) is before the probe's window ended (" + std::to_string(to_ms) +
         " ms): it stopped, or has not caught up";
}

WitnessView select_covered_records(const WitnessLog& log, const std::string& source,
                                   const std::string& source6, const std::string& nonce, long long from_ms,
                                   long long to_ms, long long cover_from_ms, long long cover_to_ms) {
  WitnessView view = select_witness_records(log, source, source6, nonce, from_ms, to_ms);
  if (!view.complete) return view;
  const std::string gap = heartbeat_gap(log, cover_from_ms, cover_to_ms);
  if (!gap.empty()) {
    view.complete = false;
    view.note = gap;
  }
  return view;
}

bool wait_for_fresh_heartbeat(const std::function<long long()>& beats, std::chrono::milliseconds period,
                              std::chrono::milliseconds max_wait) {
  using Clock = std::chrono::steady_clock;
  const auto give_up = Clock::now() + max_wait;
  period = std::max(period, std::chrono::milliseconds(1));
  long long first = -1;
  for (int round = 0; round < 100000; ++round) {  // the time bound ends it; the count is a guard
    const long long now_beats = beats();
    if (first < 0) first = now_beats;
    if (first >= 0 && now_beats > first) return true;
    const auto now = Clock::now();
    if (now >= give_up) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(period, give_up - now));
  }
  return false;
}

}  // namespace isoharness::deploy
