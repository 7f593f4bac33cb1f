#include "harness/verify/debian_version.h"

#include <algorithm>

namespace isoharness::verify {
namespace {

struct Parts {
  long long epoch = 0;
  std::string_view upstream;
  std::string_view revision;
};

Parts split(std::string_view v) {
  Parts p;
  const auto colon = v.find(':');
  if (colon != std::string_view::npos && colon > 0 &&
      std::all_of(v.begin(), v.begin() + static_cast<long>(colon),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    for (char c : v.substr(0, std::min<std::size_t>(colon, 9))) p.epoch = p.epoch * 10 + (c - '0');
    v.remove_prefix(colon + 1);
  }
  const auto dash = v.rfind('-');
  p.upstream = dash == std::string_view::npos ? v : v.substr(0, dash);
  p.revision = dash == std::string_view::npos ? std::string_view() : v.substr(dash + 1);
  return p;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// dpkg's weight of one character of a non-digit run (0 stands for its end).
int weight(char c) {
  if (c == '~') return -1;
  if (is_alpha(c)) return c;
  return c + 256;
}

int compare_part(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    while ((i < a.size() && !is_digit(a[i])) || (j < b.size() && !is_digit(b[j]))) {
      const int wa = i < a.size() && !is_digit(a[i]) ? weight(a[i]) : 0;
      const int wb = j < b.size() && !is_digit(b[j]) ? weight(b[j]) : 0;
      if (wa != wb) return wa < wb ? -1 : 1;
      if (i < a.size() && !is_digit(a[i])) ++i;
      if (j < b.size() && !is_digit(b[j])) ++j;
    }
    while (i < a.size() && a[i] == '0') ++i;
    while (j < b.size() && b[j] == '0') ++j;
    std::size_t di = i, dj = j;
    while (di < a.size() && is_digit(a[di])) ++di;
    while (dj < b.size() && is_digit(b[dj])) ++dj;
    if (di - i != dj - j) return di - i < dj - j ? -1 : 1;  // more significant digits: larger
    const int c = a.substr(i, di - i).compare(b.substr(j, dj - j));
    if (c != 0) return c < 0 ? -1 : 1;
    i = di;
    j = dj;
  }
  return 0;
}

}  // namespace

int compare_debian_versions(std::string_view a, std::string_view b) {
  const Parts pa = split(a), pb = split(b);
  if (pa.epoch != pb.epoch) return pa.epoch < pb.epoch ? -1 : 1;
  if (int c = compare_part(pa.upstream, pb.upstream)) return c;
  return compare_part(pa.revision, pb.revision);
}

bool debian_version_shape(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  const Parts p = split(s);
  if (p.upstream.empty() || !is_digit(p.upstream.front())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return is_digit(c) || is_alpha(c) || c == '.' || c == '+' || c == '~' || c == '-' || c == ':';
  });
}

}  // namespace isoharness::verify
