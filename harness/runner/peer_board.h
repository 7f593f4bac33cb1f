// The run's board of live sandboxes that other sandboxes may try as peers (other evals'
// sandboxes: harness/verify/peer_checks.h). A sandbox joins once its `isoprobe peer-serve`
// listens and it has reported its own addresses; it leaves before it is torn down. A
// prober borrows up to k others (never itself; other items and eval sets first), reads each
// one's serve record through its own SSH session into that peer, and gives them back. A
// leaving sandbox is offered to no new prober and waits (bounded) until those that borrowed
// it gave it back, so its record is not torn down under a reader.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "harness/transport/ssh_route.h"

namespace isoharness::runner {

struct PeerEntry {
  std::string name;                     // the sandbox record's id (s1, s2, ...)
  std::string item_id;                  // its plan item
  std::string eval_set;                 // its eval set ("" when the job has none)
  std::vector<std::string> ipv4, ipv6;  // its own report (posture `addresses`)
  transport::SshRoute route;            // how the harness reaches it (to read its record)
  std::string service = {};             // its agent service (the one tried), "" = unknown
};

class PeerBoard {
 public:
  void join(PeerEntry entry);
  // Up to k live entries other than `self`: other eval sets first, then other items, then
  // other sandboxes of the same item (another deployment, never a sibling service); random
  // within each. Each is borrowed until give_back.
  std::vector<PeerEntry> borrow(const std::string& self, const std::string& item_id,
                                const std::string& eval_set, int k);
  void give_back(const std::vector<PeerEntry>& borrowed);
  // No new borrower gets `name`; waits at most max_wait for the ones it has. Returns whether
  // every borrower gave it back in time.
  bool leave(const std::string& name, std::chrono::milliseconds max_wait);
  std::size_t live() const;

 private:
  struct Slot {
    PeerEntry entry;
    int borrowers = 0;
    bool leaving = false;
  };
  mutable std::mutex mutex_;
  std::condition_variable returned_;
  std::map<std::string, Slot> slots_;
};

// Leaves the board when it goes (the attempt ends however it ends).
class BoardMembership {
 public:
  BoardMembership() = default;
  BoardMembership(PeerBoard* board, std::string name, std::chrono::milliseconds max_wait)
      : board_(board), name_(std::move(name)), max_wait_(max_wait) {}
  ~BoardMembership() {
    if (board_) board_->leave(name_, max_wait_);
  }
  BoardMembership(const BoardMembership&) = delete;
  BoardMembership& operator=(const BoardMembership&) = delete;

 private:
  PeerBoard* board_ = nullptr;
  std::string name_;
  std::chrono::milliseconds max_wait_{0};
};

}  // namespace isoharness::runner
