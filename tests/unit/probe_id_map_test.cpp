#include <catch2/catch.hpp>

#include "probes/core/id_map.h"
#include "tests/unit/probe_fixture.h"

using namespace isoprobe;

TEST_CASE("uid_map of the initial namespace", "[probe]") {
  IdMap m = parse_id_map(probe_fixture("uid_map_host.txt"));
  CHECK(m.problems.empty());
  CHECK(m.is_identity());
}

TEST_CASE("uid_map inside a user namespace", "[probe]") {
  IdMap m = parse_id_map(probe_fixture("uid_map_userns.txt"));
  CHECK(m.problems.empty());
  REQUIRE(m.ranges.size() == 2);
  CHECK(m.ranges[0] == std::array<std::uint64_t, 3>{0, 100000, 65536});
  CHECK(m.ranges[1] == std::array<std::uint64_t, 3>{1000, 1000, 1});
  CHECK_FALSE(m.is_identity());
}

TEST_CASE("uid_map: hostile lines are reported", "[probe]") {
  IdMap m = parse_id_map(probe_fixture("uid_map_hostile.txt"));
  REQUIRE(m.ranges.size() == 1);
  CHECK(m.problems.size() == 3);
  CHECK(parse_id_map("").ranges.empty());
  CHECK(parse_id_map("0 0 1").ranges.size() == 1);  // no final newline
  std::string many;
  for (int i = 0; i < 1000; ++i) many += "1 1 1\n";
  CHECK(parse_id_map(many).ranges.size() == kMaxIdMapLines);
}
