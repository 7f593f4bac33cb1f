#include <catch2/catch.hpp>

#include "probes/core/net_dev.h"
#include "probes/core/text_util.h"

using namespace isoprobe;

TEST_CASE("numbers and addresses parse strictly", "[probe]") {
  CHECK(parse_u64("18446744073709551615") == 18446744073709551615ULL);
  CHECK_FALSE(parse_u64("18446744073709551616"));
  CHECK_FALSE(parse_u64(""));
  CHECK_FALSE(parse_u64("12a"));
  CHECK(parse_u64("ff", 16) == 255u);
  CHECK(parse_i64("-5") == -5);
  CHECK(parse_ipv4("127.0.0.1") == 0x7f000001u);
  CHECK_FALSE(parse_ipv4("127.0.0"));
  CHECK_FALSE(parse_ipv4("127.0.0.1.5"));
  CHECK_FALSE(parse_ipv4("127.0.0.01"));
  CHECK_FALSE(parse_ipv4("256.0.0.1"));
  CHECK_FALSE(parse_ipv4("1..2.3"));
  CHECK(format_ipv4(0xc0000201u) == "192.0.2.1");
  CHECK(hex16(0xa80425fbULL) == "00000000a80425fb");
}

TEST_CASE("evidence never grows past 4 KiB", "[probe]") {
  Evidence ev;
  ev.add("small", "abc");
  CHECK(ev.str().find("abc") != std::string::npos);
  CHECK_FALSE(ev.truncated());
  ev.add("big", std::string(10000, 'x'));
  CHECK(ev.truncated());
  CHECK(ev.str().size() <= kMaxEvidence);
  ev.add_line("more");
  CHECK(ev.str().size() <= kMaxEvidence);
  CHECK(ev.str().find("[evidence truncated]") != std::string::npos);
}

TEST_CASE("/proc/net/dev interface names", "[probe]") {
  std::string text =
      "Inter-|   Receive                            |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes\n"
      "    lo:  123 4 0 0 0 0 0 0 123 4 0 0 0 0 0 0\n"
      "  eth0: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0\n"
      "  bad/name: 1\n"
      "veth-x";
  auto names = parse_net_dev(text);
  CHECK(names == std::vector<std::string>{"lo", "eth0"});
  CHECK(parse_net_dev("").empty());
}

TEST_CASE("line splitting is bounded", "[probe]") {
  CHECK(split_lines("a\nb\nc", 2).size() == 2);
  CHECK(split_lines("a\n").size() == 1);
  CHECK(split_fields("  a \t b  ").size() == 2);
  CHECK(trim("  x \n") == "x");
}
