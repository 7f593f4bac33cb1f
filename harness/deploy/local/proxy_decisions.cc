#include "harness/deploy/local/proxy_decisions.h"

#include <charconv>
#include <vector>

namespace isoharness::deploy::local {
namespace {

bool decision_number(std::string_view text, long long& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && out >= 0;
}

// The line's space-separated fields (at most 8: a longer line is malformed).
std::vector<std::string_view> decision_fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos <= line.size() && out.size() < 8) {
    std::size_t sp = line.find(' ', pos);
    if (sp == std::string_view::npos) sp = line.size();
    out.push_back(line.substr(pos, sp - pos));
    pos = sp + 1;
  }
  return out;
}

}  // namespace

DropView proxy_decisions(std::string_view log_text, const std::string& source, long long from_ms,
                         long long to_ms) {
  DropView view;
  std::size_t pos = 0;
  while (pos < log_text.size()) {
    const std::size_t eol = log_text.find('\n', pos);
    if (eol == std::string_view::npos) break;  // a line still being written
    const auto f = decision_fields(log_text.substr(pos, eol - pos));
    pos = eol + 1;
    long long ms = 0, port = 0;
    if (f.size() != 7 || f[0] != "P1" || !decision_number(f[1], ms) || !decision_number(f[5], port) ||
        port > 65535)
      continue;
    if (f[2] == "full") {
      if (ms <= to_ms) {
        view.complete = false;
        view.note = "the name proxy's decision log filled before the probe ended";
      }
      break;
    }
    if ((f[2] != "reset" && f[2] != "forward") || f[3] != source || ms < from_ms || ms > to_ms) continue;
    DropRecord r;
    r.unix_ms = ms;
    r.proto = "tcp";
    r.source = std::string(f[3].substr(0, 64));
    r.destination = std::string(f[4].substr(0, 64));
    r.port = static_cast<int>(port);
    r.dropped = f[2] == "reset";
    r.reason = r.dropped ? "reset by the node's name proxy" : "forwarded by the node's name proxy";
    r.name = f[6] == "-" ? std::string() : std::string(f[6].substr(0, 253));
    view.records.push_back(std::move(r));
  }
  return view;
}

}  // namespace isoharness::deploy::local
