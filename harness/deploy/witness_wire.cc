#include "harness/deploy/witness_wire.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <charconv>

namespace isoharness::deploy {
namespace {

bool read_number(std::string_view word, long long& out) {
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), out);
  return ec == std::errc() && end == word.data() + word.size() && out >= 0;
}

// The first space-separated word of s, and s after it.
std::string_view take_word(std::string_view& s) {
  const auto sp = s.find(' ');
  const std::string_view w = s.substr(0, sp);
  s = sp == std::string_view::npos ? std::string_view() : s.substr(sp + 1);
  return w;
}

bool same_mac(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// A log identity as witness_log_id writes it: "-" or 32 lower-case hex digits.
bool log_id_shaped(std::string_view id) {
  if (id == "-") return true;
  if (id.size() != 32) return false;
  for (const char c : id)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// The start line "A2 start <from> <size> <log-id> <mac>"; "" or what is wrong with it.
std::string read_start(std::string_view line, std::string_view key, long long from, std::string_view known_id,
                       WitnessFrames& out) {
  std::string_view rest = line;
  long long said_from = -1, size = -1;
  if (take_word(rest) != "A2" || take_word(rest) != "start" || !read_number(take_word(rest), said_from) ||
      !read_number(take_word(rest), size))
    return "the answer does not start with the witness log's start line";
  const std::string_view id = take_word(rest);
  const std::string_view mac = take_word(rest);
  if (!log_id_shaped(id) || !rest.empty() ||
      !same_mac(mac, witness_mac(key, fmt::format("start {} {} {}", said_from, size, id))))
    return "the answer's start line fails its MAC (wrong token, or not the operator's witness)";
  if (said_from != from) return fmt::format("the answer starts at byte {}, not {} as asked", said_from, from);
  out.log_size = size;
  out.log_id = id;
  out.replaced = (!known_id.empty() && id != known_id) || size < from;
  return "";
}

}  // namespace

std::string witness_mac(std::string_view key, std::string_view message) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest, &length))
    return "";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

std::string witness_log_id(std::string_view head) {
  head = head.substr(0, kWitnessLogIdBytes);
  const auto nl = head.find('\n');
  if (nl == std::string_view::npos && head.size() < kWitnessLogIdBytes) return "-";
  const std::string_view first = head.substr(0, nl);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(first.data()), first.size(), digest);
  std::string hex;
  for (int i = 0; i < 16; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

std::string frame_witness_log(std::string_view key, std::string_view log_id, std::string_view log,
                              long long from, long long log_size, std::size_t max_bytes) {
  std::string out = fmt::format("A2 start {} {} {} {}\n", from, log_size, log_id,
                                witness_mac(key, fmt::format("start {} {} {}", from, log_size, log_id)));
  long long offset = from;
  for (auto nl = log.find('\n'); nl != std::string_view::npos; nl = log.find('\n')) {
    const std::string_view line = log.substr(0, nl);
    std::string framed = fmt::format("A2 {} {} {}\n", offset,
                                     witness_mac(key, fmt::format("{} {} {}", log_id, offset, line)), line);
    if (out.size() + framed.size() > max_bytes) break;
    out += framed;
    offset += static_cast<long long>(nl) + 1;
    log.remove_prefix(nl + 1);
  }
  return out;
}

WitnessFrames read_witness_frames(std::string_view body, std::string_view key, long long from,
                                  std::string_view known_id) {
  WitnessFrames out;
  out.next_offset = from;
  const auto first = body.find('\n');
  out.problem = read_start(body.substr(0, first), key, from, known_id, out);
  if (!out.problem.empty() || out.replaced || first == std::string_view::npos) return out;
  body.remove_prefix(first + 1);
  for (auto nl = body.find('\n'); nl != std::string_view::npos; nl = body.find('\n')) {
    std::string_view rest = body.substr(0, nl);
    body.remove_prefix(nl + 1);
    long long offset = -1;
    const bool shaped = take_word(rest) == "A2" && read_number(take_word(rest), offset);
    const std::string_view mac = take_word(rest);
    if (!shaped || offset != out.next_offset ||
        !same_mac(mac, witness_mac(key, fmt::format("{} {} {}", out.log_id, offset, rest)))) {
      ++out.rejected;
      out.problem =
          fmt::format("a line at byte {} fails its MAC or does not follow the one before", out.next_offset);
      return out;
    }
    out.lines.append(rest).push_back('\n');
    out.next_offset = offset + static_cast<long long>(rest.size()) + 1;
  }
  return out;
}

WitnessFrames raw_witness_frames(std::string_view head, std::string_view bytes, long long from,
                                 long long log_size, std::string_view known_id) {
  WitnessFrames out;
  out.next_offset = from;
  out.log_size = log_size;
  out.log_id = witness_log_id(head);
  out.replaced = (!known_id.empty() && out.log_id != known_id) || log_size < from;
  if (out.replaced) return out;
  const auto last = bytes.rfind('\n');
  if (last == std::string_view::npos) return out;
  out.lines.assign(bytes.substr(0, last + 1));
  out.next_offset = from + static_cast<long long>(last) + 1;
  return out;
}

}  // namespace isoharness::deploy
