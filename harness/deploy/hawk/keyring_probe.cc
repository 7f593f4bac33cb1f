#include "harness/deploy/hawk/keyring_probe.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <vector>

#include "harness/deploy/hawk/platform_text.h"

namespace isoharness::deploy::hawk {
namespace {

using namespace std::chrono_literals;

// Prints the backend keyring would use, then (for a chainer) each backend it holds.
constexpr const char* kKeyringScript =
    "import keyring\n"
    "k = keyring.get_keyring()\n"
    "name = lambda b: type(b).__module__ + '.' + type(b).__name__\n"
    "print(name(k))\n"
    "for b in getattr(k, 'backends', []):\n"
    "    print(name(b))\n";

bool keeps_nothing(std::string_view backend) {
  return backend.find("backends.fail.") != std::string_view::npos ||
         backend.find("backends.null.") != std::string_view::npos;
}

// The program's path: as given when it names a directory, else the first executable match in PATH.
std::string find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "";
  while (!dirs.empty()) {
    const auto colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return dir + "/" + program;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return "";
}

std::string first_line_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text(256, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text.substr(0, text.find('\n'));
}

}  // namespace

std::string script_interpreter(std::string_view line) {
  if (line.substr(0, 2) != "#!") return "";
  line.remove_prefix(2);
  std::vector<std::string_view> words;
  while (!line.empty()) {
    const auto start = line.find_first_not_of(" \t\r");
    if (start == std::string_view::npos) break;
    line.remove_prefix(start);
    const auto end = line.find_first_of(" \t\r");
    words.push_back(line.substr(0, end));
    if (end == std::string_view::npos) break;
    line.remove_prefix(end);
  }
  if (words.empty()) return "";
  const bool env = words[0] == "/usr/bin/env" || words[0] == "/bin/env";
  if (!env) return std::string(words[0]);
  for (std::size_t i = 1; i < words.size(); ++i)
    if (!words[i].empty() && words[i][0] != '-') return std::string(words[i]);
  return "";
}

KeyringFinding judge_keyring(std::string_view printed, std::string source) {
  KeyringFinding f;
  f.source = std::move(source);
  const std::string text = platform_tail(printed, 12, 1024);
  const auto nl = text.find('\n');
  f.backend = text.substr(0, nl);
  const std::string chain = nl == std::string::npos ? "" : text.substr(nl + 1);
  if (f.backend.empty()) {
    f.detail = "the interpreter named no keyring backend";
    return f;
  }
  const bool chainer = f.backend.find("chainer") != std::string::npos;
  bool usable_in_chain = false;
  for (std::size_t at = 0; at < chain.size();) {
    const auto end = std::min(chain.find('\n', at), chain.size());
    usable_in_chain |= !keeps_nothing(chain.substr(at, end - at));
    at = end + 1;
  }
  f.ok = !keeps_nothing(f.backend) && (!chainer || usable_in_chain);
  f.detail = f.ok ? "tokens are kept by " + f.backend + (chainer ? " (" + chain + ")" : "")
                  : f.backend + " keeps no token: every hawk call would start a device login";
  for (char& c : f.detail)
    if (c == '\n') c = ',';
  return f;
}

KeyringFinding hawk_keyring(const std::string& cli, const HawkCli::Runner& runner) {
  if (const char* forced = std::getenv("PYTHON_KEYRING_BACKEND"); forced && *forced) {
    KeyringFinding f = judge_keyring(forced, "PYTHON_KEYRING_BACKEND");
    return f;
  }
  const std::string path = find_program(cli);
  if (path.empty()) return {false, "", "", fmt::format("{} is not in PATH", cli)};
  const std::string python = script_interpreter(first_line_of(path));
  if (python.empty())
    return {false, "", path,
            fmt::format("{} names no interpreter on its first line; ask it with `keyring "
                        "--list-backends` in its environment",
                        path)};
  RunOptions options;
  options.deadline = 15s;
  options.max_output = std::size_t{64} * 1024;
  options.stdin_data = "";
  auto r = runner({python, "-c", kKeyringScript}, options);
  const std::string source = python + " (the interpreter of " + path + ")";
  if (!r || !r->ok())
    return {false, "", source,
            r ? fmt::format("asking its keyring failed: {}",
                            r->timed_out ? "no answer within 15 s" : platform_tail(r->err, 1, 300))
              : "asking its keyring failed: " + r.error().message};
  return judge_keyring(r->out, source);
}

}  // namespace isoharness::deploy::hawk
