#include "harness/deploy/hawk/witness_cursor.h"

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

}  // namespace isoharness::deploy::hawk
