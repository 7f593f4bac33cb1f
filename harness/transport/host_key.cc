#include "harness/transport/host_key.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

namespace isoharness::transport {
namespace {

constexpr std::array<std::string_view, 6> kKeyTypes = {
    "ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "ssh-dss"};

bool is_space(char c) {
  return c == ' ' || c == '\t';
}

std::vector<std::string_view> split_fields(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    std::size_t start = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

// Strict base64 (RFC 4648 alphabet, padding optional only at the end).
std::optional<std::string> base64_decode(std::string_view in) {
  if (in.empty() || in.size() > std::size_t{64} * 1024) return std::nullopt;
  std::string text(in);
  while (text.size() % 4 != 0) text += '=';
  std::size_t pad = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (c == '=') {
      ++pad;
      continue;
    }
    if (pad > 0 || !(alnum || c == '+' || c == '/')) return std::nullopt;
  }
  if (pad > 2) return std::nullopt;
  std::string out(text.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0 || static_cast<std::size_t>(n) < pad) return std::nullopt;
  out.resize(static_cast<std::size_t>(n) - pad);
  return out;
}

std::string base64_encode(std::string_view in) {
  std::string out((in.size() + 2) / 3 * 4 + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// An SSH key blob is a run of strings (uint32 length, bytes): the algorithm name, then the
// key's fields. Returns the strings, or nothing when the blob does not split exactly.
std::optional<std::vector<std::string_view>> blob_strings(std::string_view blob) {
  std::vector<std::string_view> out;
  while (!blob.empty()) {
    if (blob.size() < 4 || out.size() >= 8) return std::nullopt;
    std::uint32_t len = (std::uint32_t(std::uint8_t(blob[0])) << 24) |
                        (std::uint32_t(std::uint8_t(blob[1])) << 16) |
                        (std::uint32_t(std::uint8_t(blob[2])) << 8) | std::uint32_t(std::uint8_t(blob[3]));
    if (blob.size() - 4 < len) return std::nullopt;
    out.push_back(blob.substr(4, len));
    blob.remove_prefix(4 + std::size_t(len));
  }
  return out;
}

// Fields after the name each key type has (RFC 4253, 5656, 8709).
std::size_t field_count(std::string_view type) {
  if (type == "ssh-ed25519") return 1;
  if (type == "ssh-dss") return 4;
  return 2;  // rsa: e, n; ecdsa: curve, Q
}

// Glob match with '*' (any run) and '?' (one character), case-insensitive.
bool glob_match(std::string_view pattern, std::string_view text) {
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  auto same = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  };
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || (pattern[p] != '*' && same(pattern[p], text[t])))) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// Does one known_hosts host pattern name host:port? Plain names and "[host]:port", and
// OpenSSH's hashed form "|1|base64(salt)|base64(HMAC-SHA1(salt, name))"; wildcards * and ?.
bool pattern_matches(std::string_view pattern, std::string_view host, int port) {
  std::string name = port == 22 ? std::string(host) : fmt::format("[{}]:{}", host, port);
  if (pattern.substr(0, 3) == "|1|") {
    std::string_view rest = pattern.substr(3);
    auto bar = rest.find('|');
    if (bar == std::string_view::npos) return false;
    auto salt = base64_decode(rest.substr(0, bar));
    auto want = base64_decode(rest.substr(bar + 1));
    if (!salt || !want) return false;
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    if (!HMAC(EVP_sha1(), salt->data(), static_cast<int>(salt->size()),
              reinterpret_cast<const unsigned char*>(name.data()), name.size(), mac, &mac_len)) {
      return false;
    }
    return std::string_view(reinterpret_cast<const char*>(mac), mac_len) == *want;
  }
  return glob_match(pattern, name);
}

}  // namespace

std::string PublicKey::line() const {
  return type + " " + base64_encode(blob);
}

std::string PublicKey::fingerprint() const {
  return sha256_fingerprint(blob);
}

std::string sha256_fingerprint(std::string_view blob) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(blob.data()), blob.size(), digest);
  std::string b64 = base64_encode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
  while (!b64.empty() && b64.back() == '=') b64.pop_back();
  return "SHA256:" + b64;
}

Expected<PublicKey> parse_public_key(std::string_view line) {
  if (line.size() > std::size_t{16} * 1024) return make_error("public key line is longer than 16 KiB");
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || is_space(line.back())))
    line.remove_suffix(1);
  for (char c : line) {
    if (c == '\n' || c == '\r' || c == '\0')
      return make_error("public key line contains a line break or NUL");
  }
  auto fields = split_fields(line);
  if (fields.size() < 2) {
    return make_error(
        fmt::format("public key line '{}' needs a key type and base64 key", line.substr(0, 80)));
  }
  if (std::find(kKeyTypes.begin(), kKeyTypes.end(), fields[0]) == kKeyTypes.end()) {
    return make_error(fmt::format("unknown public key type '{}'", fields[0].substr(0, 40)));
  }
  auto blob = base64_decode(fields[1]);
  if (!blob) return make_error(fmt::format("public key of type {}: the key is not valid base64", fields[0]));
  auto strings = blob_strings(*blob);
  if (!strings || strings->size() != 1 + field_count(fields[0]) || (*strings)[0] != fields[0] ||
      (fields[0] == "ssh-ed25519" && (*strings)[1].size() != 32)) {
    return make_error(
        fmt::format("public key of type {}: the key data is for a different type or malformed", fields[0]));
  }
  return PublicKey{std::string(fields[0]), std::move(*blob), false};
}

Expected<std::vector<PublicKey>> known_hosts_keys(std::string_view text, std::string_view source,
                                                  std::string_view host, int port) {
  std::vector<PublicKey> keys;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    auto fields = split_fields(line);
    if (fields.empty() || fields[0][0] == '#') continue;
    bool revoked = false;
    if (fields[0][0] == '@') {
      if (fields[0] == "@cert-authority") continue;
      if (fields[0] != "@revoked") {
        return make_error(
            fmt::format("{}:{}: unknown marker '{}'", source, line_no, fields[0].substr(0, 40)));
      }
      revoked = true;
      fields.erase(fields.begin());
    }
    if (fields.size() < 3) {
      return make_error(fmt::format("{}:{}: expected 'hosts keytype base64-key'", source, line_no));
    }
    bool named = false, negated = false;
    std::string_view patterns = fields[0];
    while (!patterns.empty()) {
      auto comma = patterns.find(',');
      std::string_view p = patterns.substr(0, comma);
      patterns = comma == std::string_view::npos ? std::string_view() : patterns.substr(comma + 1);
      bool negate = !p.empty() && p[0] == '!';
      if (negate) p.remove_prefix(1);
      if (pattern_matches(p, host, port)) (negate ? negated : named) = true;
    }
    if (!named || negated) continue;
    std::string key_text = fmt::format("{} {}", fields[1], fields[2]);
    auto key = parse_public_key(key_text);
    if (!key) return make_error(fmt::format("{}:{}: {}", source, line_no, key.error().message));
    key->revoked = revoked;
    keys.push_back(std::move(*key));
  }
  return keys;
}

KeyVerdict check_host_key(std::string_view presented_type, std::string_view presented_blob,
                          const std::vector<PublicKey>& pinned) {
  bool any_trusted = false;
  for (const auto& key : pinned) {
    if (key.revoked) {
      if (key.blob == presented_blob) return KeyVerdict::changed;
      continue;
    }
    any_trusted = true;
  }
  if (!any_trusted) return KeyVerdict::unknown;
  for (const auto& key : pinned) {
    if (!key.revoked && key.type == presented_type && key.blob == presented_blob) return KeyVerdict::match;
  }
  return KeyVerdict::changed;
}

std::string hostkey_method_preference(const std::vector<PublicKey>& pinned) {
  std::vector<std::string> methods;
  auto add = [&](const std::string& m) {
    if (std::find(methods.begin(), methods.end(), m) == methods.end()) methods.push_back(m);
  };
  for (const auto& key : pinned) {
    if (key.revoked) continue;
    if (key.type == "ssh-rsa") {
      add("rsa-sha2-512");
      add("rsa-sha2-256");
      add("ssh-rsa");
    } else {
      add(key.type);
    }
  }
  std::string out;
  for (const auto& m : methods) out += (out.empty() ? "" : ",") + m;
  return out;
}

}  // namespace isoharness::transport
