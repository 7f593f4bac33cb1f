#include <catch2/catch.hpp>

#include "probes/core/kallsyms.h"
#include "tests/unit/probe_fixture.h"

using namespace isoprobe;

TEST_CASE("kallsyms classification", "[probe]") {
  auto populated = classify_kallsyms(probe_fixture("kallsyms_populated.txt"));
  CHECK(populated.state == "populated");
  CHECK(populated.lines == 5);
  auto zeroed = classify_kallsyms(probe_fixture("kallsyms_zeroed.txt"));
  CHECK(zeroed.state == "zeroed");
  CHECK(zeroed.lines == 4);  // module symbols included
  CHECK(zeroed.nonzero == 0);
  auto empty = classify_kallsyms(probe_fixture("kallsyms_empty.txt"));
  CHECK(empty.state == "empty");
  CHECK(empty.lines == 0);
  CHECK(classify_kallsyms("\n\n  \n").state == "empty");
  CHECK(classify_kallsyms(probe_fixture("kallsyms_tiny.txt")).state == "populated");
}

TEST_CASE("kallsyms: malformed lines never count as populated", "[probe]") {
  auto c = classify_kallsyms(probe_fixture("kallsyms_hostile.txt"));
  CHECK(c.state == "zeroed");
  CHECK(c.lines == 1);
  CHECK(c.malformed == 4);
  CHECK(classify_kallsyms("ffffffff81000000").state == "empty");    // truncated mid-line
  CHECK(classify_kallsyms("ffffffff81000000 T").state == "empty");  // truncated before the name
  CHECK(classify_kallsyms("garbage garbage garbage").state == "empty");
}
