#include "harness/deploy/hawk/witness_cursor.h"

#include <fmt/format.h>

#include <algorithm>

namespace isoharness::deploy::hawk {

void absorb(WitnessLogCursor& cursor, const WitnessFrames& frames, std::size_t max_records) {
  cursor.rejected += frames.rejected;
  if (frames.replaced) return;
  if (!frames.log_id.empty()) cursor.log_id = frames.log_id;
  if (frames.next_offset > cursor.offset) cursor.offset = frames.next_offset;
  const WitnessLog fresh = parse_witness_log(frames.lines);
  for (const auto& r : fresh.records) cursor.newest_ms = std::max(cursor.newest_ms, r.unix_ms);
  for (const long long beat : fresh.heartbeats) cursor.newest_ms = std::max(cursor.newest_ms, beat);
  cursor.newest_ms = std::max(cursor.newest_ms, fresh.full_since_ms);
  auto& log = cursor.log;
  log.ready = log.ready || fresh.ready;
  if (log.full_since_ms < 0) log.full_since_ms = fresh.full_since_ms;
  log.malformed += fresh.malformed;
  log.quotas.insert(log.quotas.end(), fresh.quotas.begin(), fresh.quotas.end());
  cursor.beats += static_cast<long long>(fresh.heartbeats.size());
  // The heartbeats' times, for whether the witness was alive through a probe's window; the
  // oldest go first past the bound (a window before the oldest kept one is then not covered).
  log.heartbeats.insert(log.heartbeats.end(), fresh.heartbeats.begin(), fresh.heartbeats.end());
  if (log.heartbeats.size() > max_records)
    log.heartbeats.erase(log.heartbeats.begin(),
                         log.heartbeats.begin() + static_cast<long>(log.heartbeats.size() - max_records));
  log.records.insert(log.records.end(), fresh.records.begin(), fresh.records.end());
  if (log.records.size() <= max_records) return;
  const auto drop = static_cast<long>(log.records.size() - max_records);
  for (auto it = log.records.begin(); it != log.records.begin() + drop; ++it)
    cursor.forgotten_to_ms = std::max(cursor.forgotten_to_ms, it->unix_ms);
  log.records.erase(log.records.begin(), log.records.begin() + drop);
}

void restart(WitnessLogCursor& cursor, const std::string& log_id) {
  cursor.forgotten_to_ms = std::max(cursor.forgotten_to_ms, cursor.newest_ms);
  cursor.log = WitnessLog{};
  cursor.log_id = log_id;
  cursor.offset = 0;
  ++cursor.restarts;
}

namespace {

std::string read_until_caught_up(WitnessLogCursor& cursor, std::size_t max_bytes, const LogReader& read,
                                 std::size_t& budget) {
  int restarts = 0;
  for (int round = 0; round < 64 && budget >= 4096; ++round) {
    auto got = read(cursor.offset, cursor.log_id, budget);
    if (!got) return got.error().message;
    const WitnessFrames& frames = got->frames;
    absorb(cursor, frames);
    if (!frames.problem.empty()) return "the witness log's answer was rejected: " + frames.problem;
    budget -= std::min(budget, got->bytes);
    if (frames.replaced) {  // another log at this address, or this one truncated: read it anew
      if (++restarts > 1) return "the witness log at this address was replaced twice within one read";
      restart(cursor, frames.log_id);
      continue;
    }
    if (frames.next_offset >= frames.log_size) return "";
    if (frames.lines.empty()) return "the witness log's answer brought no whole line";
  }
  return fmt::format("the witness log is further behind than one probe run reads ({} bytes)", max_bytes);
}

}  // namespace

std::string catch_up(WitnessLogCursor& cursor, std::size_t max_bytes, const LogReader& read,
                     std::size_t* used) {
  std::size_t budget = max_bytes;
  std::string behind = read_until_caught_up(cursor, max_bytes, read, budget);
  if (used) *used = max_bytes - budget;
  return behind;
}

}  // namespace isoharness::deploy::hawk
