#include "harness/deploy/hawk/platform_text.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace isoharness::deploy::hawk {
namespace {

// The device login (OAuth device authorization) as CLIs show it: the hawk CLI writes "No
// valid access token found. Logging in...", then "User code: <code>" and a verification URL
// carrying `user_code=`; older versions wrote the same to stdout, and other versions may
// word it differently. Any of these phrases (lower-cased) means a person is now awaited.
constexpr std::array<std::string_view, 11> kLoginPhrases = {
    "no valid access token",
    "logging in",
    "log in to",
    "sign in to",
    "device code",
    "user code",
    "user_code",
    "device login",
    "device authorization",
    "finish login",
    "waiting for authentication",
};
// Words that, beside a URL, make it a sign-in link.
constexpr std::array<std::string_view, 8> kSignInWords = {
    "login", "log in", "sign in", "signin", "activate", "verif", "authori", "authenticat",
};
// How far before the fresh bytes a window reaches, so a prompt split across reads is whole.
constexpr std::size_t kLookBack = 512;

std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool code_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A user code as identity providers print them: two groups of 4 to 8 upper-case letters or
// digits joined by '-' (WDJB-MJHT), at least one letter, standing alone.
bool has_user_code(std::string_view s) {
  for (std::size_t dash = s.find('-'); dash != std::string_view::npos; dash = s.find('-', dash + 1)) {
    std::size_t a = dash, b = dash + 1;
    while (a > 0 && code_char(s[a - 1])) --a;
    while (b < s.size() && code_char(s[b])) ++b;
    const std::size_t left = dash - a, right = b - dash - 1;
    const bool alone = (a == 0 || s[a - 1] == ' ' || s[a - 1] == ':' || s[a - 1] == '\n') &&
                       (b == s.size() || !std::isalnum(static_cast<unsigned char>(s[b])));
    const auto word = s.substr(a, b - a);
    const bool letter = std::any_of(word.begin(), word.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
    if (alone && letter && left >= 4 && left <= 8 && right >= 4 && right <= 8) return true;
  }
  return false;
}

// Whether a window of text has the shape of a device login prompt.
bool looks_like_login(std::string_view window) {
  const std::string low = lower_ascii(window);
  for (auto phrase : kLoginPhrases)
    if (low.find(phrase) != std::string::npos) return true;
  const auto url = low.find("://");
  if (url == std::string::npos) return false;
  const auto url_end = low.find_first_of(" \t\r\n", url);
  if (low.substr(url, url_end - url).find("code=") != std::string::npos) return true;
  if (has_user_code(window)) return true;
  return std::any_of(kSignInWords.begin(), kSignInWords.end(),
                     [&](std::string_view w) { return low.find(w) != std::string::npos; });
}

// The part of `text` that may hold a prompt worth reading now: the fresh bytes and a little
// before them, from a line's start; for stdout only its opening (kStdoutPromptWindow).
std::string_view prompt_window(std::string_view text, std::size_t fresh, Stream stream) {
  fresh = std::min(fresh, text.size());
  std::size_t end = text.size();
  if (stream == Stream::out) {
    end = std::min(end, kStdoutPromptWindow);
    for (std::size_t at = 0; at < end; at = text.find('\n', at) + 1) {
      if (text[at] == '{' || text[at] == '[') end = at;
      if (text.find('\n', at) == std::string_view::npos) break;
    }
  }
  const std::size_t fresh_from = text.size() - fresh;
  if (fresh_from >= end) return {};
  std::size_t from = fresh_from > kLookBack ? fresh_from - kLookBack : 0;
  const auto line = from == 0 ? std::string_view::npos : text.rfind('\n', from);
  if (line != std::string_view::npos && from - line < kLookBack) from = line + 1;
  return text.substr(from, end - from);
}

// The window's first line that looks like a prompt on its own (else its last non-empty
// line), printable and at most 160 characters, for the message.
std::string quoted_line(std::string_view window) {
  std::string_view last;
  for (std::size_t at = 0; at < window.size();) {
    const auto nl = std::min(window.find('\n', at), window.size());
    const std::string_view line = window.substr(at, nl - at);
    if (looks_like_login(line)) return platform_tail(line, 1, 160);
    if (line.find_first_not_of(" \r\t") != std::string_view::npos) last = line;
    at = nl + 1;
  }
  return platform_tail(last, 1, 160);
}

}  // namespace

std::string platform_tail(std::string_view text, std::size_t max_lines, std::size_t max_bytes) {
  if (max_lines == 0) return "";
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  std::size_t start = text.size();
  std::size_t lines = 0;
  while (start > 0) {
    const auto nl = text.rfind('\n', start - 1);
    if (nl == std::string_view::npos) {
      start = 0;
      break;
    }
    start = ++lines == max_lines ? nl + 1 : nl;
    if (lines == max_lines) break;
  }
  std::string_view tail = text.substr(start);
  if (tail.size() > max_bytes) tail = tail.substr(tail.size() - max_bytes);
  std::string out(tail);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n') || u > 0x7e) c = '?';
  }
  return out;
}

std::string login_prompt(std::string_view text, std::size_t fresh, Stream stream) {
  const std::string_view window = prompt_window(text, fresh, stream);
  if (window.empty() || !looks_like_login(window)) return "";
  return "it printed \"" + quoted_line(window) + "\" on " + (stream == Stream::out ? "stdout" : "stderr") +
         ", the shape of a device login, which waits for a person at a browser";
}

}  // namespace isoharness::deploy::hawk
