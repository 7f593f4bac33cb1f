// The run's board of live peers: who is offered to whom, how many, and a leaving sandbox
// waiting (bounded) for the probers that borrowed it.
#include <catch2/catch.hpp>
#include <future>
#include <set>

#include "harness/runner/peer_board.h"

using namespace isoharness::runner;
using namespace std::chrono_literals;

namespace {

PeerEntry entry(const std::string& name, const std::string& item, const std::string& set) {
  return {name, item, set, {"192.0.2.1"}, {}, {}};
}

std::set<std::string> names(const std::vector<PeerEntry>& es) {
  std::set<std::string> out;
  for (const auto& e : es) out.insert(e.name);
  return out;
}

}  // namespace

TEST_CASE("peer board: never yourself, at most k, other evals first", "[runner]") {
  PeerBoard board;
  board.join(entry("s1", "a", "set1"));
  board.join(entry("s2", "a", "set1"));  // same item: another deployment of it
  board.join(entry("s3", "b", "set1"));  // another item of the same eval set
  board.join(entry("s4", "c", "set2"));  // another eval set
  for (int round = 0; round < 20; ++round) {
    auto one = board.borrow("s1", "a", "set1", 1);
    CHECK(names(one) == std::set<std::string>{"s4"});
    board.give_back(one);
    auto two = board.borrow("s1", "a", "set1", 2);
    CHECK(names(two) == std::set<std::string>{"s3", "s4"});
    board.give_back(two);
  }
  auto all = board.borrow("s1", "a", "set1", 10);
  CHECK(names(all) == std::set<std::string>{"s2", "s3", "s4"});
  board.give_back(all);
  CHECK(board.borrow("s9", "z", "set9", 0).empty());
}

TEST_CASE("peer board: a leaving sandbox is offered to no one and waits for its borrowers", "[runner]") {
  PeerBoard board;
  board.join(entry("s1", "a", "set1"));
  board.join(entry("s2", "b", "set2"));
  auto borrowed = board.borrow("s1", "a", "set1", 1);
  REQUIRE(names(borrowed) == std::set<std::string>{"s2"});
  auto leaving = std::async(std::launch::async, [&] { return board.leave("s2", 10s); });
  // Until it is given back, s2 stays (and is offered to no one new).
  CHECK(leaving.wait_for(200ms) == std::future_status::timeout);
  CHECK(board.borrow("s1", "a", "set1", 5).empty());
  board.give_back(borrowed);
  REQUIRE(leaving.wait_for(5s) == std::future_status::ready);
  CHECK(leaving.get());
  CHECK(board.live() == 1);
}

TEST_CASE("peer board: a borrower that never gives back holds a leaver only so long", "[runner]") {
  PeerBoard board;
  board.join(entry("s2", "b", "set2"));
  auto borrowed = board.borrow("s1", "a", "set1", 1);
  REQUIRE(borrowed.size() == 1);
  CHECK_FALSE(board.leave("s2", 50ms));
  CHECK(board.live() == 0);
  board.give_back(borrowed);  // after it left: nothing to do, nothing breaks
  {
    BoardMembership m(&board, "nobody", 10ms);  // leaving what was never joined is fine
  }
  CHECK(board.live() == 0);
}
