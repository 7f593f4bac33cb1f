#include "harness/runner/peer_board.h"

#include <algorithm>
#include <random>

namespace isoharness::runner {

void PeerBoard::join(PeerEntry entry) {
  std::lock_guard lock(mutex_);
  const std::string name = entry.name;
  slots_[name] = Slot{std::move(entry), 0, false};
}

std::vector<PeerEntry> PeerBoard::borrow(const std::string& self, const std::string& item_id,
                                         const std::string& eval_set, int k) {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<int, Slot*>> candidates;  // (closeness, slot): 0 other eval set .. 2 same item
  for (auto& [name, slot] : slots_) {
    if (name == self || slot.leaving) continue;
    const bool other_set = slot.entry.eval_set != eval_set || eval_set.empty();
    const int closeness = slot.entry.item_id == item_id ? 2 : (other_set ? 0 : 1);
    candidates.emplace_back(closeness, &slot);
  }
  std::random_device rd;
  std::mt19937 rng(rd());
  std::shuffle(candidates.begin(), candidates.end(), rng);
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<PeerEntry> out;
  for (auto& [closeness, slot] : candidates) {
    if (static_cast<int>(out.size()) >= k) break;
    ++slot->borrowers;
    out.push_back(slot->entry);
  }
  return out;
}

void PeerBoard::give_back(const std::vector<PeerEntry>& borrowed) {
  {
    std::lock_guard lock(mutex_);
    for (const auto& e : borrowed) {
      auto it = slots_.find(e.name);
      if (it != slots_.end() && it->second.borrowers > 0) --it->second.borrowers;
    }
  }
  returned_.notify_all();
}

bool PeerBoard::leave(const std::string& name, std::chrono::milliseconds max_wait) {
  std::unique_lock lock(mutex_);
  auto it = slots_.find(name);
  if (it == slots_.end()) return true;
  it->second.leaving = true;
  const bool free = returned_.wait_for(lock, max_wait, [&] { return slots_.at(name).borrowers == 0; });
  slots_.erase(name);
  return free;
}

std::size_t PeerBoard::live() const {
  std::lock_guard lock(mutex_);
  return slots_.size();
}

}  // namespace isoharness::runner
