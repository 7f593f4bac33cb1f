#include "probes/core/dns_packet.h"

#include <cctype>

#include "probes/core/target_spec.h"

namespace isoprobe {

namespace {

std::uint16_t be16(std::string_view p, std::size_t at) {
  return static_cast<std::uint16_t>((static_cast<unsigned char>(p[at]) << 8) |
                                    static_cast<unsigned char>(p[at + 1]));
}

void put16(std::string& out, std::uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v & 0xff));
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

}  // namespace

DnsQuery build_dns_query(std::uint16_t id, std::string_view name) {
  DnsQuery q;
  if (!is_valid_dns_name(name)) {
    q.error = "not a valid DNS name: '" + std::string(name.substr(0, 80)) + "'";
    return q;
  }
  if (name.back() == '.') name.remove_suffix(1);
  std::string& out = q.bytes;
  put16(out, id);
  put16(out, 0x0100);  // standard query, recursion desired
  put16(out, 1);       // one question
  put16(out, 0);
  put16(out, 0);
  put16(out, 0);
  while (!name.empty()) {
    std::size_t dot = name.find('.');
    std::string_view label = name.substr(0, dot);
    out.push_back(static_cast<char>(label.size()));
    out.append(label);
    if (dot == std::string_view::npos) break;
    name.remove_prefix(dot + 1);
  }
  out.push_back('\0');
  put16(out, 1);  // type A
  put16(out, 1);  // class IN
  return q;
}

bool read_dns_name(std::string_view p, std::size_t offset, std::string* name, std::size_t* next) {
  std::string out;
  std::size_t pos = offset;
  bool jumped = false;
  int jumps = 0;
  while (true) {
    if (pos >= p.size()) return false;
    auto len = static_cast<unsigned char>(p[pos]);
    if ((len & 0xc0) == 0xc0) {
      if (pos + 1 >= p.size()) return false;
      if (++jumps > 64) return false;  // a pointer loop
      std::size_t target = static_cast<std::size_t>(be16(p, pos) & 0x3fff);
      if (!jumped && next) *next = pos + 2;
      jumped = true;
      pos = target;
      continue;
    }
    if ((len & 0xc0) != 0) return false;  // reserved label types
    if (len == 0) {
      if (!jumped && next) *next = pos + 1;
      break;
    }
    if (pos + 1 + len > p.size()) return false;
    if (!out.empty()) out.push_back('.');
    out.append(p.substr(pos + 1, len));
    if (out.size() > 255) return false;
    pos += 1 + len;
  }
  if (name) *name = lower(out);
  return true;
}

DnsResponse parse_dns_response(std::string_view p, std::uint16_t expected_id,
                               std::string_view expected_name) {
  DnsResponse r;
  auto fail = [&](std::string why) {
    r.ok = false;
    r.error = std::move(why);
    r.addresses.clear();
    return r;
  };
  if (p.size() < 12) return fail("shorter than a DNS header (" + std::to_string(p.size()) + " bytes)");
  if (be16(p, 0) != expected_id) return fail("answer id does not match our query");
  std::uint16_t flags = be16(p, 2);
  if (!(flags & 0x8000)) return fail("not a response (QR bit clear)");
  r.truncated = (flags & 0x0200) != 0;
  r.rcode = flags & 0x000f;
  std::uint16_t qd = be16(p, 4), an = be16(p, 6);
  if (qd != 1) return fail("expected exactly one question, got " + std::to_string(qd));
  std::string qname;
  std::size_t pos = 0;
  if (!read_dns_name(p, 12, &qname, &pos)) return fail("malformed question name");
  if (qname != lower(expected_name)) return fail("answer is for another name: '" + qname.substr(0, 80) + "'");
  if (pos + 4 > p.size()) return fail("truncated question");
  if (be16(p, pos) != 1 || be16(p, pos + 2) != 1) return fail("answer is for another type or class");
  pos += 4;
  for (std::uint16_t i = 0; i < an; ++i) {
    std::size_t after = 0;
    if (!read_dns_name(p, pos, nullptr, &after))
      return fail("malformed answer name in record " + std::to_string(i + 1));
    pos = after;
    if (pos + 10 > p.size()) return fail("truncated answer record " + std::to_string(i + 1));
    std::uint16_t type = be16(p, pos), cls = be16(p, pos + 2), rdlen = be16(p, pos + 8);
    pos += 10;
    if (pos + rdlen > p.size())
      return fail("answer record " + std::to_string(i + 1) + " runs past the packet");
    if (type == 1 && cls == 1) {
      if (rdlen != 4) return fail("A record with " + std::to_string(rdlen) + " bytes of data");
      std::uint32_t a = (static_cast<std::uint32_t>(static_cast<unsigned char>(p[pos])) << 24) |
                        (static_cast<std::uint32_t>(static_cast<unsigned char>(p[pos + 1])) << 16) |
                        (static_cast<std::uint32_t>(static_cast<unsigned char>(p[pos + 2])) << 8) |
                        static_cast<std::uint32_t>(static_cast<unsigned char>(p[pos + 3]));
      if (r.addresses.size() < 32) r.addresses.push_back(a);
    }
    pos += rdlen;
  }
  r.ok = true;
  return r;
}

}  // namespace isoprobe
