#include "harness/transport/ssh_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <vector>

namespace isoharness::transport {
namespace {

constexpr std::size_t kMaxCommand = 4096;
// ssh(1) options that take an argument; every other letter is a flag.
constexpr std::string_view kArgOptions = "BbcDEeFIiJLlmOopQRSWw";
constexpr std::string_view kFlagOptions = "46AaCfGgKkMNnqsTtVvXxYy";

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

Expected<deploy::SshEndpoint> parse_ssh_endpoint(std::string_view text, std::string_view item,
                                                 bool allow_port) {
  deploy::SshEndpoint ep;
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

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// What the options and the destination of an ssh line say, before they are checked.
struct SshLineParts {
  std::optional<std::string> jump_text, login_user, destination;
  std::optional<int> port;
};

// The words of the line after `ssh`, with a copied prompt and surrounding blanks removed.
Expected<std::vector<std::string>> ssh_arguments(std::string_view command) {
  if (command.size() > kMaxCommand) return parse_error("longer than 4096 characters");
  while (!command.empty() && (command.back() == '\n' || command.back() == '\r' || command.back() == ' ')) {
    command.remove_suffix(1);
  }
  while (!command.empty() && command.front() == ' ') command.remove_prefix(1);
  if (command.substr(0, 2) == "$ ") command.remove_prefix(2);  // a copied prompt
  auto words_or = split_shell_words(command);
  if (!words_or) return words_or.error();
  std::vector<std::string> words = std::move(*words_or);
  if (words.empty()) return parse_error("empty");
  std::string_view program = words[0];
  auto slash = program.rfind('/');
  if ((slash == std::string_view::npos ? program : program.substr(slash + 1)) != "ssh") {
    return parse_error(
        fmt::format("expected the command to start with ssh, got '{}'", program.substr(0, 40)));
  }
  words.erase(words.begin());
  return words;
}

// `-o key=value`: the keys that change the route.
Status apply_ssh_config_option(const std::string& arg, SshLineParts& parts) {
  auto eq = arg.find_first_of("= ");
  std::string key = lower(std::string_view(arg).substr(0, eq));
  std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
  if (key == "proxyjump") {
    if (parts.jump_text) return parse_error("jumphost given twice (-J and ProxyJump)");
    parts.jump_text = value;
  } else if (key == "port") {
    auto p = parse_port(value, "-o Port");
    if (!p) return p.error();
    parts.port = *p;
  } else if (key == "user") {
    parts.login_user = value;
  } else if (key == "proxycommand") {
    return parse_error("ProxyCommand is not supported; the route must use -J");
  }
  return Ok{};
}

// One option that takes an argument.
Status apply_ssh_option(char opt, const std::string& arg, SshLineParts& parts) {
  if (opt == 'J') {
    if (parts.jump_text) return parse_error("-J given twice");
    parts.jump_text = arg;
  } else if (opt == 'p') {
    auto p = parse_port(arg, "-p");
    if (!p) return p.error();
    parts.port = *p;
  } else if (opt == 'l') {
    parts.login_user = arg;
  } else if (opt == 'o') {
    return apply_ssh_config_option(arg, parts);
  }
  return Ok{};
}

// Walks the options as ssh(1) reads them: flags may be grouped (-tt), an option's
// argument is the rest of its word or the next word, and one destination ends the line.
Expected<SshLineParts> read_ssh_words(const std::vector<std::string>& words) {
  SshLineParts parts;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--") {
      ++i;
      if (i < words.size() && !parts.destination) parts.destination = words[i++];
      if (i < words.size())
        return parse_error(fmt::format("unexpected remote command '{}'", words[i].substr(0, 40)));
      break;
    }
    if (w.size() < 2 || w[0] != '-') {
      if (parts.destination)
        return parse_error(fmt::format("unexpected remote command '{}'", w.substr(0, 40)));
      parts.destination = w;
      continue;
    }
    for (std::size_t k = 1; k < w.size(); ++k) {
      char opt = w[k];
      if (kFlagOptions.find(opt) != std::string_view::npos) continue;
      if (kArgOptions.find(opt) == std::string_view::npos) {
        return parse_error(fmt::format("unknown option '-{}'", opt));
      }
      std::string arg;
      if (k + 1 < w.size()) {
        arg = w.substr(k + 1);
      } else if (i + 1 < words.size()) {
        arg = words[++i];
      } else {
        return parse_error(fmt::format("option -{} needs an argument", opt));
      }
      if (auto applied = apply_ssh_option(opt, arg, parts); !applied) return applied.error();
      break;  // the rest of the word was the argument
    }
  }
  return parts;
}

// The route the parts name, with ssh's defaults and precedence.
Expected<deploy::SshRoute> route_of(const SshLineParts& parts) {
  if (!parts.jump_text) return parse_error("no jumphost: expected -J user@jump[:port]");
  if (parts.jump_text->find(',') != std::string::npos)
    return parse_error("several jump hops are not supported");
  if (!parts.destination) return parse_error("no destination: expected user@host after the options");

  auto jump = parse_ssh_endpoint(*parts.jump_text, "jumphost", true);
  if (!jump) return jump.error();
  if (jump->user.empty())
    return parse_error(fmt::format("jumphost '{}' has no user (expected user@host)", jump->host));
  if (jump->port == 0) jump->port = 22;

  auto sandbox = parse_ssh_endpoint(*parts.destination, "destination", false);
  if (!sandbox) return sandbox.error();
  if (parts.login_user) {
    if (!valid_user(*parts.login_user))
      return parse_error(fmt::format("-l: '{}' is not a valid user name", parts.login_user->substr(0, 64)));
    if (sandbox->user.empty()) sandbox->user = *parts.login_user;  // ssh: user@host wins over -l
  }
  if (sandbox->user.empty())
    return parse_error(fmt::format("destination '{}' has no user (expected user@host)", sandbox->host));
  if (sandbox->port == 0) sandbox->port = parts.port.value_or(22);  // ssh: a URI port wins over -p

  return deploy::SshRoute{std::move(*jump), std::move(*sandbox)};
}

}  // namespace

Expected<deploy::SshRoute> parse_ssh_command(std::string_view command) {
  auto words = ssh_arguments(command);
  if (!words) return words.error();
  auto parts = read_ssh_words(*words);
  if (!parts) return parts.error();
  return route_of(*parts);
}

}  // namespace isoharness::transport
