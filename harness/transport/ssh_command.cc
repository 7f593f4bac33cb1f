#include "harness/transport/ssh_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

namespace isoharness::transport {
namespace {

Error parse_error(const std::string& what) {
  return make_error("ssh command: " + what);
}

}  // namespace

Expected<std::vector<std::string>> split_shell_words(std::string_view text) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\'') {
      auto end = text.find('\'', i + 1);
      if (end == std::string_view::npos) return parse_error("unterminated single quote");
      cur.append(text.substr(i + 1, end - i - 1));
      i = end;
      in_word = true;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '$' || text[j] == '`')
          return parse_error(fmt::format("'{}' inside double quotes is refused", text[j]));
        if (text[j] == '\\' && j + 1 < text.size()) ++j;
        cur += text[j];
      }
      if (j >= text.size()) return parse_error("unterminated double quote");
      i = j;
      in_word = true;
    } else if (c == '\\') {
      if (i + 1 >= text.size()) return parse_error("trailing backslash");
      cur += text[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else if (std::string_view(";|&$`<>(){}*?!#").find(c) != std::string_view::npos) {
      return parse_error(fmt::format("shell syntax '{}' at position {} is refused", c, i + 1));
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return parse_error(fmt::format("control character at position {} is refused", i + 1));
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(cur));
  return words;
}

namespace {

Expected<int> parse_port(std::string_view text, std::string_view item) {
  int port = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || port < 1 || port > 65535) {
    return parse_error(
        fmt::format("{}: port '{}' is not a number from 1 to 65535", item, text.substr(0, 20)));
  }
  return port;
}

bool valid_user(std::string_view u) {
  return !u.empty() && u.size() <= 64 && u[0] != '-' && std::all_of(u.begin(), u.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

bool valid_host(std::string_view h, bool v6) {
  if (h.empty() || h.size() > 253 || h[0] == '-' || h[0] == '.') return false;
  return std::all_of(h.begin(), h.end(), [v6](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ||
           (v6 && (c == ':' || c == '%'));
  });
}

}  // namespace

Expected<SshEndpoint> parse_ssh_endpoint(std::string_view text, std::string_view item, bool allow_port) {
  SshEndpoint ep;
  ep.port = 0;
  bool uri = text.substr(0, 6) == "ssh://";
  if (uri) {
    text.remove_prefix(6);
    if (!text.empty() && text.back() == '/') text.remove_suffix(1);
  }
  auto at = text.rfind('@');
  if (at != std::string_view::npos) {
    ep.user = std::string(text.substr(0, at));
    if (!valid_user(ep.user))
      return parse_error(fmt::format("{}: '{}' is not a valid user name", item, ep.user.substr(0, 64)));
    text.remove_prefix(at + 1);
  }
  std::string_view host = text, port;
  bool v6 = false;
  if (!text.empty() && text[0] == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos)
      return parse_error(fmt::format("{}: unterminated '[' in host", item));
    host = text.substr(1, close - 1);
    v6 = true;
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return parse_error(fmt::format("{}: unexpected text after ']'", item));
      port = rest.substr(1);
      if (port.empty()) return parse_error(fmt::format("{}: empty port", item));
    }
  } else if (auto colon = text.find(':'); colon != std::string_view::npos) {
    if (text.find(':', colon + 1) != std::string_view::npos) {
      v6 = true;  // a bare IPv6 address has no port
    } else {
      host = text.substr(0, colon);
      port = text.substr(colon + 1);
      if (port.empty()) return parse_error(fmt::format("{}: empty port", item));
    }
  }
  if (!valid_host(host, v6))
    return parse_error(fmt::format("{}: '{}' is not a valid host", item, host.substr(0, 80)));
  ep.host = std::string(host);
  if (!port.empty()) {
    if (!allow_port && !uri)
      return parse_error(fmt::format("{}: a port here is not understood by ssh; use -p", item));
    auto p = parse_port(port, item);
    if (!p) return p.error();
    ep.port = *p;
  }
  return ep;
}

}  // namespace isoharness::transport
