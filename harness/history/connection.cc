#include "harness/history/connection.h"

namespace isoharness::history {

namespace {

// libpq's keyword/value form ("host=db.example port=5432 user=x password=…"): a target whose
// first word is one of libpq's connection keywords followed by '=' is read as one, never as
// a SQLite file name (which would then be created, and echoed with its password).
bool is_keyword_value_conninfo(std::string_view target) {
  static constexpr std::string_view kKeywords[] = {"host",
                                                   "hostaddr",
                                                   "port",
                                                   "dbname",
                                                   "user",
                                                   "password",
                                                   "passfile",
                                                   "service",
                                                   "sslmode",
                                                   "options",
                                                   "require_auth",
                                                   "target_session_attrs",
                                                   "connect_timeout",
                                                   "application_name",
                                                   "sslrootcert",
                                                   "sslcert",
                                                   "sslkey",
                                                   "gssencmode",
                                                   "client_encoding"};
  const auto start = target.find_first_not_of(" \t");
  const auto eq = target.find('=');
  if (start == std::string_view::npos || eq == std::string_view::npos || eq < start) return false;
  std::string_view key = target.substr(start, eq - start);
  while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.remove_suffix(1);
  for (const auto k : kKeywords)
    if (key == k) return true;
  return false;
}

}  // namespace

bool is_postgres_uri(std::string_view target) {
  return target.starts_with("postgresql://") || target.starts_with("postgres://") ||
         is_keyword_value_conninfo(target);
}

std::unique_ptr<Connection> connect(const std::string& target) {
  return is_postgres_uri(target) ? connect_postgres(target) : connect_sqlite(target);
}

std::string spell_ddl(std::string_view portable, std::string_view text, std::string_view real,
                      std::string_view serial) {
  std::string out(portable);
  const std::pair<std::string_view, std::string_view> spellings[] = {
      {"{text}", text}, {"{real}", real}, {"{serial}", serial}};
  for (const auto& [token, spelled] : spellings)
    for (auto i = out.find(token); i != std::string::npos; i = out.find(token, i + spelled.size()))
      out.replace(i, token.size(), spelled);
  return out;
}

}  // namespace isoharness::history
