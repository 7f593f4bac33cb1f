// The shared history through the real binary against a real PostgreSQL server the test
// starts (tests/support/postgres_server.h), compared with the same runs in SQLite:
//   - four processes recording 25 runs each at once: 100 runs, none twice, drift identical
//     to the same runs recorded one after another (into PostgreSQL and into SQLite);
//   - `history copy` of a 30-night SQLite history: identical drift on both, and a second
//     copy adds nothing;
//   - the view isoharness_points answers a plain psql query;
//   - a URI that cannot connect (exit 3, the host named, the password not), a database
//     that is not a history (exit 2, untouched) and a newer schema (exit 2).
// Result documents are synthetic nights (tests/unit/history_fixture.h): a step at night 50
// of 100 (15 of 30) with a runsc upgrade there.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "harness/common/subprocess.h"
#include "tests/support/postgres_server.h"
#include "tests/support/test_support.h"
#include "tests/unit/history_fixture.h"

using namespace isoharness;
using nlohmann::json;

namespace {

std::string isoharness_bin() {
  return test::binary_dir() + "/harness/cli/isoharness";
}

RunResult history(const std::string& db, std::vector<std::string> args) {
  std::vector<std::string> argv = {isoharness_bin(), "history", "--db", db};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_command(argv, RunOptions{.deadline = std::chrono::minutes(3)});
  REQUIRE(r.has_value());
  return *r;
}

// Night files n00..n(count-1) in dir; the level steps from 1.03 to 1.25 at step_at.
std::vector<std::string> write_nights(const std::string& dir, int count, int step_at) {
  std::vector<std::string> files;
  for (int i = 0; i < count; ++i) {
    const double wobble = 1.0 + 0.004 * ((i * 7) % 5 - 2);
    const bool stepped = i >= step_at;
    const auto doc =
        test::parity_night(i, (stepped ? 1.25 : 1.03) * wobble,
                           stepped ? "runsc version release-20231009.0" : "runsc version 0.0~20221219");
    files.push_back(dir + "/" + test::night_id(i) + ".json");
    std::ofstream(files.back()) << doc.dump();
  }
  return files;
}

std::string drift_json(const std::string& db) {
  const auto r = history(db, {"drift", "--format", "json", "--no-gate"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("four processes recording into one PostgreSQL history at once land every run once",
          "[system][history][postgres]") {
  test::require_system({"setpriv"});
  auto& server = test::PostgresServer::shared();
  test::TempDir dir("isoharness-pg-test");
  const auto files = write_nights(dir.str(), 100, 50);
  const std::string shared = server.new_database("together");
  std::vector<RunResult> results(4);
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w)
    writers.emplace_back([&, w] {
      std::vector<std::string> args = {"record"};
      for (int i = w; i < 100; i += 4)
        args.push_back(files[static_cast<std::size_t>(i)]);  // interleaved nights
      auto r = run_command(
          [&] {
            std::vector<std::string> argv = {isoharness_bin(), "history", "--db", shared};
            argv.insert(argv.end(), args.begin(), args.end());
            return argv;
          }(),
          RunOptions{.deadline = std::chrono::minutes(5)});
      if (r) results[static_cast<std::size_t>(w)] = *r;
    });
  for (auto& t : writers) t.join();
  for (const auto& r : results) {
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(lines(r.out).size() == 25);
  }
  const auto counts =
      server.psql(shared.substr(shared.rfind('/') + 1),
                  "SELECT count(*), count(DISTINCT id) FROM runs; SELECT count(*) FROM points;");
  INFO(counts.err);
  CHECK(counts.out == "100|100\n200\n");
  const auto list = history(shared, {"list", "--limit", "1000"});
  const auto listed = lines(list.out);
  CHECK(listed.size() == 100);
  std::set<std::string> ids;
  for (const auto& l : listed) ids.insert(l.substr(0, l.find(' ')));
  CHECK(ids.size() == 100);

  // The same runs recorded one after another, into PostgreSQL and into SQLite.
  const std::string sequential = server.new_database("sequential");
  const std::string sqlite = dir.str() + "/history.sqlite";
  for (const auto& db : {sequential, sqlite}) {
    std::vector<std::string> args = {"record"};
    args.insert(args.end(), files.begin(), files.end());
    const auto r = history(db, args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
  }
  const std::string together = drift_json(shared);
  CHECK(together == drift_json(sequential));
  CHECK(together == drift_json(sqlite));
  const auto doc = json::parse(together);
  CHECK(doc["summary"]["runs"] == 100);
  CHECK(doc["series"][0]["changes"].size() == 1);
  CHECK(doc["series"][0]["changes"][0]["run"] == "n50");
  std::printf(
      "history postgres test: 4 x 25 runs at once -> %zu runs (%zu distinct), drift identical to the "
      "sequential PostgreSQL and SQLite histories (%zu bytes)\n",
      listed.size(), ids.size(), together.size());
}

TEST_CASE("history copy moves a SQLite history into PostgreSQL, idempotently, and the view answers psql",
          "[system][history][postgres]") {
  test::require_system({"setpriv"});
  auto& server = test::PostgresServer::shared();
  test::TempDir dir("isoharness-pg-test");
  const auto files = write_nights(dir.str(), 30, 15);
  const std::string sqlite = dir.str() + "/team.sqlite";
  std::vector<std::string> args = {"record"};
  args.insert(args.end(), files.begin(), files.end());
  REQUIRE(history(sqlite, args).exit_code == 0);
  REQUIRE(history(sqlite, {"annotate", "n15", "moved the nightly to the new gVisor"}).exit_code == 0);
  const std::string name = "copied";
  const std::string shared = server.new_database(name);

  const auto first = history(dir.str(), {"copy", "--from", sqlite, "--to", shared});
  INFO(first.out << first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(first.out.find("30 run(s) added, 0 already there, 0 kept") != std::string::npos);
  CHECK(first.out.find("1 note(s) added") != std::string::npos);
  CHECK(first.out.find(server.password()) == std::string::npos);
  const std::string before = drift_json(sqlite);
  CHECK(drift_json(shared) == before);
  CHECK(json::parse(before)["series"][0]["changes"][0]["notes"][0]["text"] ==
        "moved the nightly to the new gVisor");

  const auto second = history(dir.str(), {"copy", "--from", sqlite, "--to", shared});
  CHECK(second.exit_code == 0);
  CHECK(second.out.find("0 run(s) added, 30 already there, 0 kept") != std::string::npos);
  CHECK(second.out.find("0 note(s) added, 1 already there") != std::string::npos);
  CHECK(drift_json(shared) == before);
  std::printf("history postgres test: copy of 30 nights: %s", first.out.c_str());
  std::printf("history postgres test: copied again: %s", second.out.c_str());

  // The README's query, through psql itself.
  const std::string db = shared.substr(shared.rfind('/') + 1);
  const auto view = server.psql(db,
                                "select run_id, started, runsc, series, estimate, low, high, verdict from "
                                "isoharness_points where series like '%/mix' order by started desc limit 3");
  INFO(view.err);
  REQUIRE(view.exit_code == 0);
  const auto rows = lines(view.out);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].rfind("n29|2026-11-02T02:00:00Z|runsc version release-20231009.0|parity/gvisor/tier/mix|",
                      0) == 0);
  std::printf("history postgres test: psql on isoharness_points:\n%s", view.out.c_str());
  // Read-only: a join view takes no writes.
  CHECK(server.psql(db, "delete from isoharness_points").exit_code != 0);
}

TEST_CASE("history refuses what it cannot or must not use: exit 3 for no server, exit 2 for the rest",
          "[system][history][postgres]") {
  test::require_system({"setpriv"});
  auto& server = test::PostgresServer::shared();
  const auto down = history("postgresql://nightly:hunter2-secret@127.0.0.1:1/history", {"list"});
  CHECK(down.exit_code == 3);
  CHECK(down.err.find("host 127.0.0.1 port 1") != std::string::npos);
  CHECK(down.err.find("hunter2-secret") == std::string::npos);
  std::printf("history postgres test: unreachable server: %s", down.err.c_str());
  // An error that does carry the password: libpq quotes the token it cannot decode.
  const auto bad_escape = history("postgresql://nightly:hunter2%zz-secret@127.0.0.1:1/history", {"list"});
  CHECK(bad_escape.exit_code == 2);
  CHECK(bad_escape.err.find("invalid percent-encoded token") != std::string::npos);
  CHECK(bad_escape.err.find("hunter2") == std::string::npos);

  const std::string foreign = server.new_database("foreign");
  const std::string foreign_name = foreign.substr(foreign.rfind('/') + 1);
  REQUIRE(
      server.psql(foreign_name, "CREATE TABLE invoices (number integer); INSERT INTO invoices VALUES (7);")
          .ok());
  const auto refused = history(foreign, {"list"});
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("not an isoharness history") != std::string::npos);
  CHECK(refused.err.find(server.password()) == std::string::npos);
  CHECK(server
            .psql(foreign_name,
                  "SELECT string_agg(table_name, ',') FROM information_schema.tables WHERE "
                  "table_schema = 'public';")
            .out == "invoices\n");

  const std::string newer = server.new_database("newer");
  REQUIRE(history(newer, {"list"}).exit_code == 0);
  REQUIRE(server.psql(newer.substr(newer.rfind('/') + 1), "UPDATE isoharness_schema SET version = 99;").ok());
  const auto too_new = history(newer, {"list"});
  CHECK(too_new.exit_code == 2);
  CHECK(too_new.err.find("newer than this isoharness") != std::string::npos);
}
