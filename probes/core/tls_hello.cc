#include "probes/core/tls_hello.h"

#include <algorithm>

namespace isoprobe {
namespace {

constexpr std::size_t kMaxHead = 8192;

void put16(std::string& out, std::size_t v) {
  out += static_cast<char>((v >> 8) & 0xff);
  out += static_cast<char>(v & 0xff);
}

void put24(std::string& out, std::size_t v) {
  out += static_cast<char>((v >> 16) & 0xff);
  put16(out, v & 0xffff);
}

// One extension: type, then its body with a 16-bit length.
void put_extension(std::string& out, std::uint16_t type, const std::string& body) {
  put16(out, type);
  put16(out, body.size());
  out += body;
}

std::string hex_bytes(std::initializer_list<std::uint8_t> bytes) {
  return std::string(bytes.begin(), bytes.end());
}

std::string extensions(std::string_view server_name, const std::array<std::uint8_t, 32>& random) {
  std::string ext;
  if (!server_name.empty()) {
    std::string entry;
    entry += '\0';  // host_name
    put16(entry, server_name.size());
    entry += server_name;
    std::string list;
    put16(list, entry.size());
    put_extension(ext, 0x0000, list + entry);
  }
  put_extension(ext, 0x000a, hex_bytes({0x00, 0x04, 0x00, 0x1d, 0x00, 0x17}));  // x25519, secp256r1
  put_extension(ext, 0x000b, hex_bytes({0x01, 0x00}));                          // uncompressed points
  put_extension(ext, 0x000d, hex_bytes({0x00, 0x06, 0x04, 0x03, 0x08, 0x04, 0x04, 0x01}));
  put_extension(ext, 0x002b, hex_bytes({0x04, 0x03, 0x04, 0x03, 0x03}));  // TLS 1.3, TLS 1.2
  std::string share = hex_bytes({0x00, 0x1d, 0x00, 0x20});                // x25519, 32 bytes
  share.append(random.begin(), random.end());
  std::string shares;
  put16(shares, share.size());
  put_extension(ext, 0x0033, shares + share);
  return ext;
}

// A bounded big-endian reader over the bytes seen so far.
struct Reader {
  std::string_view data;
  std::size_t pos = 0;
  bool short_read = false;
  std::size_t take(std::size_t n) {
    if (pos + n > data.size()) {
      short_read = true;
      pos = data.size();
      return 0;
    }
    std::size_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<std::uint8_t>(data[pos + i]);
    pos += n;
    return v;
  }
  void skip(std::size_t n) {
    if (pos + n > data.size()) short_read = true;
    pos = std::min(pos + n, data.size());
  }
};

std::string lower_host(std::string_view name) {
  std::string out(name.substr(0, 253));
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

// The server_name extension's host name, from its body.
PeekResult sni_from_extension(std::string_view body) {
  Reader r{body};
  std::size_t list = r.take(2);
  std::size_t end = std::min(r.pos + list, body.size());
  while (!r.short_read && r.pos + 3 <= end) {
    std::size_t type = r.take(1), len = r.take(2);
    if (r.pos + len > end) break;
    if (type == 0 && len > 0) return {PeekStatus::found, lower_host(body.substr(r.pos, len))};
    r.skip(len);
  }
  return {PeekStatus::not_this_protocol, ""};
}

// Walks the ClientHello body (after the handshake header) to its extensions.
PeekResult sni_from_hello_body(Reader& r) {
  r.skip(2 + 32);     // client_version, random
  r.skip(r.take(1));  // session id
  r.skip(r.take(2));  // cipher suites
  r.skip(r.take(1));  // compression methods
  if (r.short_read) return {PeekStatus::not_this_protocol, ""};
  if (r.pos == r.data.size()) return {PeekStatus::absent, ""};  // no extensions at all
  const std::size_t total = r.take(2);
  const std::size_t end = r.pos + total;
  if (r.short_read || end > r.data.size()) return {PeekStatus::not_this_protocol, ""};
  while (r.pos + 4 <= end) {
    std::size_t type = r.take(2), len = r.take(2);
    if (r.pos + len > end) return {PeekStatus::not_this_protocol, ""};
    if (type == 0) return sni_from_extension(r.data.substr(r.pos, len));
    r.skip(len);
  }
  return {PeekStatus::absent, ""};
}

}  // namespace

std::string build_client_hello(std::string_view server_name, const std::array<std::uint8_t, 32>& random) {
  std::string body = hex_bytes({0x03, 0x03});  // legacy version TLS 1.2
  body.append(random.begin(), random.end());
  body += static_cast<char>(32);  // a session id, as TLS 1.3 clients send for middleboxes
  body.append(random.rbegin(), random.rend());
  std::string suites =
      hex_bytes({0x13, 0x01, 0x13, 0x02, 0x13, 0x03, 0xc0, 0x2f, 0xc0, 0x2b, 0xc0, 0x30, 0x00, 0x9c});
  put16(body, suites.size());
  body += suites;
  body += hex_bytes({0x01, 0x00});  // compression: null only
  const std::string ext = extensions(server_name.substr(0, 253), random);
  put16(body, ext.size());
  body += ext;
  std::string handshake = hex_bytes({0x01});  // client_hello
  put24(handshake, body.size());
  handshake += body;
  std::string record = hex_bytes({0x16, 0x03, 0x01});  // handshake record, TLS 1.0 record version
  put16(record, handshake.size());
  return record + handshake;
}

PeekResult peek_client_hello_sni(std::string_view bytes) {
  if (bytes.empty()) return {};
  if (static_cast<std::uint8_t>(bytes[0]) != 0x16) return {PeekStatus::not_this_protocol, ""};
  if (bytes.size() < 5) return {};
  Reader rec{bytes};
  rec.skip(1);
  if (rec.take(1) != 3) return {PeekStatus::not_this_protocol, ""};
  rec.skip(1);
  const std::size_t record_len = rec.take(2);
  if (record_len < 4 || record_len > 16384) return {PeekStatus::not_this_protocol, ""};
  if (bytes.size() < 5 + record_len) return {};
  Reader hs{bytes.substr(5, record_len)};
  if (hs.take(1) != 1) return {PeekStatus::not_this_protocol, ""};
  const std::size_t hello_len = hs.take(3);
  // A ClientHello split over several records is legal but rare; reading only the first
  // record, the proxy treats it as unreadable (and so refuses it).
  if (hello_len + 4 > record_len) return {PeekStatus::not_this_protocol, ""};
  Reader body{hs.data.substr(4, hello_len)};
  return sni_from_hello_body(body);
}

PeekResult peek_http_host(std::string_view bytes) {
  // The method: 1-16 upper-case letters, then a space. Anything else is not HTTP/1.x.
  const std::size_t sp = bytes.find(' ');
  const std::size_t method_len = std::min(sp, bytes.size());
  const bool letters = std::all_of(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(method_len),
                                   [](char c) { return c >= 'A' && c <= 'Z'; });
  if (!letters || method_len > 16 || sp == 0) return {PeekStatus::not_this_protocol, ""};
  const std::size_t eol = bytes.find("\r\n");
  const std::string_view first = bytes.substr(0, std::min(eol, bytes.size()));
  const std::size_t head_end = bytes.find("\r\n\r\n");
  if (head_end == std::string_view::npos)
    return {bytes.size() >= kMaxHead ? PeekStatus::not_this_protocol : PeekStatus::need_more, ""};
  if (head_end > kMaxHead || first.find(" HTTP/1.") == std::string_view::npos)
    return {PeekStatus::not_this_protocol, ""};
  for (std::size_t pos = eol + 2; pos < head_end;) {
    const std::size_t next = bytes.find("\r\n", pos);
    std::string_view line = bytes.substr(pos, next - pos);
    pos = next + 2;
    if (line.size() < 5 || lower_host(line.substr(0, 5)) != "host:") continue;
    std::string_view value = line.substr(5);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    if (const std::size_t colon = value.rfind(':'); colon != std::string_view::npos && value.front() != '[')
      value = value.substr(0, colon);
    return {PeekStatus::found, lower_host(value)};
  }
  return {PeekStatus::absent, ""};
}

bool allow_pattern_matches(std::string_view pattern, std::string_view name) {
  const std::string p = lower_host(pattern), n = lower_host(name);
  if (p == "*") return true;
  if (n.empty()) return false;
  if (p.starts_with("*.")) {
    const std::string_view suffix = std::string_view(p).substr(1);
    return n.size() > suffix.size() && n.ends_with(suffix);
  }
  return p == n;
}

std::string name_for_log(std::string_view name) {
  std::string out(name.substr(0, 253));
  for (char& c : out)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' || c == '*'))
      c = '?';
  return out;
}

std::string presented_name(std::string_view first_bytes) {
  auto peek = peek_client_hello_sni(first_bytes);
  if (peek.status != PeekStatus::found) peek = peek_http_host(first_bytes);
  return peek.status == PeekStatus::found ? name_for_log(peek.name) : "";
}

}  // namespace isoprobe
