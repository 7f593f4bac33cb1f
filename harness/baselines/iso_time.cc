// ISO 8601 dates and times of baseline records, normalised to UTC text that sorts as the
// history's run start times do ("YYYY-MM-DDTHH:MM:SSZ").
#include <algorithm>
#include <ctime>
#include <regex>

#include "harness/baselines/baselines.h"

namespace isoharness::baselines {

namespace {

bool valid_date(int y, int mo, int d) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1) return false;
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return d <= days[mo - 1] + (mo == 2 && leap ? 1 : 0);
}

}  // namespace

std::optional<std::string> normalise_time(std::string_view text) {
  static const std::regex re(
      R"((\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?)");
  std::cmatch m;
  if (!std::regex_match(text.data(), text.data() + text.size(), m, re)) return std::nullopt;
  const auto num = [&](int g) { return m[g].matched ? std::stoi(m[g].str()) : 0; };
  const int y = num(1), mo = num(2), d = num(3), h = num(4), mi = num(5), s = num(6);
  if (!valid_date(y, mo, d) || h > 23 || mi > 59 || s > 59) return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  std::time_t t = timegm(&tm);
  if (m[7].matched && m[7].str() != "Z") {
    std::string z = m[7].str();
    const int sign = z[0] == '-' ? -1 : 1;
    z.erase(std::remove(z.begin(), z.end(), ':'), z.end());
    const int zh = std::stoi(z.substr(1, 2)), zm = std::stoi(z.substr(3, 2));
    if (zh > 23 || zm > 59) return std::nullopt;
    t -= static_cast<std::time_t>(sign) *
         (static_cast<std::time_t>(zh) * 3600 + static_cast<std::time_t>(zm) * 60);
  }
  std::tm out{};
  gmtime_r(&t, &out);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &out);
  return std::string(buf);
}

std::optional<std::pair<std::string, std::string>> parse_cell(std::string_view text) {
  static const std::regex re(R"(([A-Za-z0-9._-]+)/([A-Za-z0-9._-]+))");
  std::cmatch m;
  if (!std::regex_match(text.data(), text.data() + text.size(), m, re)) return std::nullopt;
  return std::make_pair(m[1].str(), m[2].str());
}

std::optional<std::pair<std::string, std::string>> parse_deployment(std::string_view text) {
  return parse_cell(text);  // the same form: two names joined by '/'
}

}  // namespace isoharness::baselines
