#include <catch2/catch.hpp>

#include "probes/core/dns_packet.h"
#include "probes/core/text_util.h"

using namespace isoprobe;

namespace {

// An answer built by hand, the way a resolver would send it.
std::string answer(std::uint16_t id, const std::string& qname_wire, std::uint16_t flags,
                   std::uint16_t ancount, const std::string& answers) {
  std::string p;
  auto put16 = [&](std::uint16_t v) {
    p.push_back(static_cast<char>(v >> 8));
    p.push_back(static_cast<char>(v & 0xff));
  };
  put16(id);
  put16(flags);
  put16(1);
  put16(ancount);
  put16(0);
  put16(0);
  p += qname_wire;
  put16(1);
  put16(1);
  p += answers;
  return p;
}

const std::string kName = std::string("\x06target\x04test\x00", 13);
// NAME = pointer to offset 12, TYPE A, CLASS IN, TTL 60, RDLENGTH 4, 192.0.2.10
const std::string kA = std::string("\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\xc0\x00\x02\x0a", 16);

}  // namespace

TEST_CASE("DNS query for an A record", "[probe]") {
  DnsQuery q = build_dns_query(0x1234, "target.test");
  REQUIRE(q.error.empty());
  REQUIRE(q.bytes.size() == 12 + 13 + 4);
  CHECK(q.bytes.substr(0, 2) == std::string("\x12\x34", 2));
  CHECK(q.bytes.substr(2, 2) == std::string("\x01\x00", 2));  // RD
  CHECK(q.bytes.substr(12, 13) == kName);
  CHECK(build_dns_query(1, "target.test.").bytes == build_dns_query(1, "target.test").bytes);
  CHECK(build_dns_query(1, "").bytes.empty());
  CHECK(build_dns_query(1, "a..b").bytes.empty());
  CHECK(build_dns_query(1, std::string(64, 'a') + ".test").bytes.empty());
  CHECK_FALSE(build_dns_query(1, "bad name").error.empty());
}

TEST_CASE("DNS answer with one A record (compressed name)", "[probe]") {
  DnsResponse r = parse_dns_response(answer(7, kName, 0x8180, 1, kA), 7, "Target.Test");
  REQUIRE(r.ok);
  CHECK(r.rcode == 0);
  REQUIRE(r.addresses.size() == 1);
  CHECK(format_ipv4(r.addresses[0]) == "192.0.2.10");
}

TEST_CASE("DNS NXDOMAIN and answers without A records", "[probe]") {
  DnsResponse nx = parse_dns_response(answer(7, kName, 0x8183, 0, ""), 7, "target.test");
  REQUIRE(nx.ok);
  CHECK(nx.rcode == 3);
  CHECK(nx.addresses.empty());
  // A CNAME (type 5) only.
  std::string cname = std::string("\xc0\x0c\x00\x05\x00\x01\x00\x00\x00\x3c\x00\x02\xc0\x0c", 14);
  DnsResponse c = parse_dns_response(answer(7, kName, 0x8180, 1, cname), 7, "target.test");
  REQUIRE(c.ok);
  CHECK(c.addresses.empty());
}

TEST_CASE("DNS: answers that are not ours are rejected", "[probe]") {
  CHECK_FALSE(parse_dns_response(answer(8, kName, 0x8180, 1, kA), 7, "target.test").ok);  // id
  CHECK_FALSE(parse_dns_response(answer(7, kName, 0x0100, 1, kA), 7, "target.test").ok);  // not a response
  CHECK_FALSE(parse_dns_response(answer(7, kName, 0x8180, 1, kA), 7, "other.test").ok);   // name
}

TEST_CASE("DNS: truncated and hostile packets", "[probe]") {
  std::string good = answer(7, kName, 0x8180, 1, kA);
  // Every prefix of a good answer is either rejected or (once whole) accepted; none crash.
  for (std::size_t n = 0; n < good.size(); ++n) {
    DnsResponse r = parse_dns_response(good.substr(0, n), 7, "target.test");
    CHECK_FALSE(r.ok);
    CHECK_FALSE(r.error.empty());
  }
  // A pointer to itself in the question name: a loop.
  std::string loop = answer(7, std::string("\xc0\x0c", 2), 0x8180, 0, "");
  CHECK_FALSE(parse_dns_response(loop, 7, "target.test").ok);
  // A pointer past the end.
  CHECK_FALSE(parse_dns_response(answer(7, std::string("\xc0\xff", 2), 0x8180, 0, ""), 7, "x").ok);
  // ancount claims more records than there are.
  CHECK_FALSE(parse_dns_response(answer(7, kName, 0x8180, 50, kA), 7, "target.test").ok);
  // An A record whose length is not 4.
  std::string bad_a = kA;
  bad_a[11] = 5;
  CHECK_FALSE(parse_dns_response(answer(7, kName, 0x8180, 1, bad_a + "x"), 7, "target.test").ok);
  // rdlength running past the packet.
  std::string long_rd = kA;
  long_rd[10] = '\x7f';
  CHECK_FALSE(parse_dns_response(answer(7, kName, 0x8180, 1, long_rd), 7, "target.test").ok);
  // Reserved label type bits.
  CHECK_FALSE(parse_dns_response(answer(7, std::string("\x40\x00", 2), 0x8180, 0, ""), 7, "x").ok);
  // Two questions.
  std::string two = answer(7, kName, 0x8180, 0, "");
  two[5] = 2;
  CHECK_FALSE(parse_dns_response(two, 7, "target.test").ok);
}

TEST_CASE("DNS name reader bounds long names and pointer chains", "[probe]") {
  std::string p(12, '\0');
  for (int i = 0; i < 10; ++i) p += std::string("\x3f", 1) + std::string(63, 'a');
  p.push_back('\0');
  std::string name;
  std::size_t next = 0;
  CHECK_FALSE(read_dns_name(p, 12, &name, &next));  // longer than 255 bytes
  // A chain of pointers each pointing to the previous one, 100 deep.
  std::string chain(12, '\0');
  chain += std::string("\x01x\x00", 3);  // offset 12: "x"
  std::size_t prev = 12;
  for (int i = 0; i < 100; ++i) {
    std::size_t here = chain.size();
    chain.push_back(static_cast<char>(0xc0 | (prev >> 8)));
    chain.push_back(static_cast<char>(prev & 0xff));
    prev = here;
  }
  CHECK_FALSE(read_dns_name(chain, prev, &name, &next));
  CHECK(read_dns_name(chain, 15, &name, &next));  // one jump is fine
  CHECK(name == "x");
  CHECK(next == 17);
}
