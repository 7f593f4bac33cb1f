#include "harness/transport/ssh_line.h"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <optional>

#include "harness/transport/ssh_command.h"

namespace isoharness::transport {
namespace {

constexpr std::size_t kMaxOutput = std::size_t{64} * 1024;
constexpr std::size_t kMaxLine = 4096;

Error refuse(const std::string& what) {
  return make_error("ssh-command: " + what);
}

std::string printable(std::string_view s, std::size_t max = 60) {
  std::string out;
  for (char c : s.substr(0, max)) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  return out;
}

// " (<setting>)" after a refusal for a missing user, where the caller has such a setting.
std::string setting_hint(const std::string& setting) {
  return setting.empty() ? "" : " (" + printable(setting) + ")";
}

Expected<std::string_view> find_ssh_line(std::string_view output) {
  if (output.size() > kMaxOutput) return refuse("output longer than 64 KiB");
  while (!output.empty()) {
    auto nl = output.find('\n');
    std::string_view line = output.substr(0, nl);
    output = nl == std::string_view::npos ? std::string_view() : output.substr(nl + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.remove_suffix(1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.substr(0, 4) == "ssh ") {
      if (line.size() > kMaxLine) return refuse("the ssh line is longer than 4096 characters");
      return line;
    }
  }
  return refuse("no line starting with 'ssh ' in the output");
}

Expected<int> parse_line_port(std::string_view text, std::string_view item) {
  int port = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || port < 1 || port > 65535)
    return refuse(fmt::format("{}: port '{}' is not a number from 1 to 65535", item, printable(text, 20)));
  return port;
}

bool valid_line_user(std::string_view u) {
  return !u.empty() && u.size() <= 64 && u[0] != '-' && std::all_of(u.begin(), u.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

bool valid_path(std::string_view p) {
  return !p.empty() && p.size() <= 1024 && p[0] != '-';
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// -o keys (lower case) that change where or how the connection goes: another host, a
// proxy, a forward, a command run locally or remotely, a shared or backgrounded connection.
bool route_changing_option(const std::string& key) {
  static constexpr std::array<std::string_view, 27> kRefused = {"hostname",
                                                                "proxycommand",
                                                                "proxyusefdpass",
                                                                "localcommand",
                                                                "permitlocalcommand",
                                                                "remotecommand",
                                                                "include",
                                                                "localforward",
                                                                "remoteforward",
                                                                "dynamicforward",
                                                                "forwardagent",
                                                                "forwardx11",
                                                                "forwardx11trusted",
                                                                "tunnel",
                                                                "tunneldevice",
                                                                "controlmaster",
                                                                "controlpath",
                                                                "controlpersist",
                                                                "bindaddress",
                                                                "bindinterface",
                                                                "knownhostscommand",
                                                                "canonicalizehostname",
                                                                "canonicaldomains",
                                                                "sessiontype",
                                                                "forkafterauthentication",
                                                                "stdinnull",
                                                                "gatewayports"};
  return std::find(kRefused.begin(), kRefused.end(), key) != kRefused.end();
}

// Options that only shape the terminal or ssh's own logging, bundled or not (`-tt`, `-vvv`):
// accepted and ignored, since the harness opens its own session.
bool terminal_only(std::string_view word) {
  return word.size() > 1 && word[0] == '-' && word.find_first_not_of("tTqv", 1) == std::string_view::npos;
}

// "-tvL x" bundles terminal flags with an option, as ssh allows: "-L x" is what counts.
std::string without_terminal_flags(const std::string& word) {
  if (word.size() < 3 || word[1] == '-') return word;
  const auto first = word.find_first_not_of("tTqv", 1);
  return first == 1 || first == std::string::npos ? word : "-" + word.substr(first);
}

// Why an option outside the contract is refused, by what it does.
std::string refusal_of(char opt) {
  switch (opt) {
    case 'L':
    case 'R':
    case 'D':
    case 'W':
      return "it forwards a port or stdio, which changes where the connection goes";
    case 'F':
      return "it reads another ssh config, which can change where and how the connection goes";
    case 'w':
      return "it opens a tunnel device";
    case 'A':
    case 'X':
    case 'Y':
      return "it forwards the agent or X11 into the sandbox";
    case 'S':
    case 'M':
    case 'O':
      return "it shares a connection through a control socket";
    case 'b':
    case 'B':
      return "it binds a local address or interface";
    case 'N':
    case 'f':
    case 's':
    case 'G':
      return "it runs no session, a subsystem or ssh in the background";
    default:
      return "it is not part of the contract (accepted: -J -p -i -o -l, and -t -T -q -v ignored)";
  }
}

// What the words say before endpoints are parsed.
struct Words {
  std::optional<std::string> jump, destination, login_user;
  std::optional<int> port;
};

std::optional<Error> take_option(SshLine& line, Words& w, char opt, const std::string& arg) {
  switch (opt) {
    case 'J':
      if (w.jump) return refuse("the jumphost is given twice");
      w.jump = arg;
      return std::nullopt;
    case 'p': {
      auto p = parse_line_port(arg, "-p");
      if (!p) return p.error();
      w.port = *p;
      return std::nullopt;
    }
    case 'i':
      if (!valid_path(arg)) return refuse(fmt::format("-i: '{}' is not a file name", printable(arg)));
      line.identity_file = arg;
      return std::nullopt;
    case 'l':
      if (!valid_line_user(arg))
        return refuse(fmt::format("-l: '{}' is not a valid user name", printable(arg)));
      w.login_user = arg;
      return std::nullopt;
    case 'F':
      if (!valid_path(arg)) return refuse(fmt::format("-F: '{}' is not a file name", printable(arg)));
      line.config_file = arg;
      return std::nullopt;
    default:
      break;
  }
  // -o KEY=VALUE
  auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0)
    return refuse(fmt::format("-o '{}': expected KEY=VALUE", printable(arg)));
  std::string key = lower(std::string_view(arg).substr(0, eq));
  std::string value = arg.substr(eq + 1);
  line.options.emplace_back(arg.substr(0, eq), value);
  if (route_changing_option(key))
    return refuse(fmt::format("-o {} is refused: it changes where or how the connection goes",
                              printable(arg.substr(0, eq))));
  if (key == "proxyjump") {
    if (w.jump) return refuse("the jumphost is given twice (-J and ProxyJump)");
    w.jump = value;
  } else if (key == "port") {
    auto p = parse_line_port(value, "-o Port");
    if (!p) return p.error();
    w.port = *p;
  } else if (key == "user") {
    if (!valid_line_user(value))
      return refuse(fmt::format("-o User: '{}' is not a valid user name", printable(value)));
    w.login_user = value;
  } else if (key == "identityfile") {
    if (!valid_path(value))
      return refuse(fmt::format("-o IdentityFile: '{}' is not a file name", printable(value)));
    if (line.identity_file.empty()) line.identity_file = value;
  } else if (key == "userknownhostsfile") {
    if (!valid_path(value))
      return refuse(fmt::format("-o UserKnownHostsFile: '{}' is not a file name", printable(value)));
    line.known_hosts = value;
  }
  return std::nullopt;
}

std::optional<Error> read_words(const std::vector<std::string>& words, const SshLineRules& rules,
                                SshLine& line, Words& w) {
  for (std::size_t i = 1; i < words.size(); ++i) {
    std::string word = words[i];
    if (word.empty() || word[0] != '-') {
      if (w.destination)
        return refuse(
            fmt::format("unexpected word '{}' after the destination (a remote command is not accepted)",
                        printable(word)));
      w.destination = word;
      continue;
    }
    if (terminal_only(word)) continue;
    word = without_terminal_flags(word);
    const char opt = word.size() > 1 ? word[1] : '-';
    const bool known = opt == 'J' || opt == 'p' || opt == 'i' || opt == 'o' || opt == 'l' ||
                       (opt == 'F' && rules.allow_config_file);
    if (!known)
      return refuse(
          fmt::format("option '-{}' is refused: {}", printable(std::string_view(&opt, 1)), refusal_of(opt)));
    std::string arg;
    if (word.size() > 2) {
      arg = word.substr(2);
    } else if (i + 1 < words.size()) {
      arg = words[++i];
    } else {
      return refuse(fmt::format("option -{} needs an argument", opt));
    }
    if (auto e = take_option(line, w, opt, arg)) return e;
  }
  return std::nullopt;
}

}  // namespace

Expected<SshLine> parse_ssh_line(std::string_view output, const SshLineRules& rules) {
  auto text = find_ssh_line(output);
  if (!text) return text.error();
  auto words = split_shell_words(*text);
  if (!words) return words.error();
  SshLine line;
  Words w;
  if (auto e = read_words(*words, rules, line, w)) return *e;
  if (!w.jump) return refuse("no jumphost: expected -J user@jump[:port]");
  if (w.jump->find(',') != std::string::npos) return refuse("several jump hops are not supported");
  if (!w.destination) return refuse("no destination: expected [user@]host");

  auto jump = parse_ssh_endpoint(*w.jump, "jumphost", true);
  if (!jump) return jump.error();
  if (jump->user.empty()) jump->user = rules.jump_user.empty() ? rules.local_user : rules.jump_user;
  if (jump->user.empty())
    return refuse(fmt::format("jumphost '{}' names no user, and no default user is known{}",
                              printable(jump->host), setting_hint(rules.jump_user_setting)));
  if (jump->port == 0) jump->port = 22;

  auto sandbox = parse_ssh_endpoint(*w.destination, "destination", false);
  if (!sandbox) return sandbox.error();
  if (sandbox->user.empty() && w.login_user) sandbox->user = *w.login_user;  // ssh: user@host wins over -l
  if (sandbox->user.empty())
    sandbox->user = rules.sandbox_user.empty() ? rules.local_user : rules.sandbox_user;
  if (sandbox->user.empty())
    return refuse(
        fmt::format("destination '{}' names no user (user@host or -l), and no default user is known{}",
                    printable(sandbox->host), setting_hint(rules.sandbox_user_setting)));
  if (sandbox->port == 0) sandbox->port = w.port.value_or(22);
  line.route = SshRoute{std::move(*jump), std::move(*sandbox)};
  return line;
}

std::string local_user_name() {
  std::array<char, 4096> buf{};
  passwd pw{};
  passwd* found = nullptr;
  if (::getpwuid_r(::geteuid(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) return "";
  std::string name = found->pw_name != nullptr ? found->pw_name : "";
  return valid_line_user(name) ? name : "";
}

std::string expand_home(const std::string& path) {
  if (path != "~" && path.rfind("~/", 0) != 0) return path;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + path.substr(1);
}

}  // namespace isoharness::transport
