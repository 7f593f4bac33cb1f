// The journal (harness/runner/journal.h) when --out can no longer be written: /dev/full
// stands in for a full disk (every write there fails with ENOSPC).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "harness/common/error.h"
#include "harness/runner/journal.h"
#include "harness/runner/session.h"
#include "tests/support/test_support.h"

using namespace isoharness;
namespace fs = std::filesystem;

TEST_CASE("a journal that cannot be written moves to the kept directory and says so", "[runner]") {
  test::TempDir tmp("ih-journal");
  const std::string out = tmp.str() + "/out", kept = tmp.str() + "/kept";
  fs::create_directories(out);
  // fopen(…, "w") follows the link: the journal opens fine and every write fails.
  fs::create_symlink("/dev/full", out + "/journal.jsonl");
  runner::Journal journal(out, {{"run", {{"id", "abc123"}}}, {"schema", "isoharness.result/v1"}}, kept);
  journal.append("sandbox", {{"id", "s1"}});
  journal.append("sandbox", {{"id", "s2"}});

  CHECK(journal.path() == kept + "/abc123.jsonl");
  CHECK_THAT(journal.write_error(),
             Catch::Contains("cannot write the journal " + out + "/journal.jsonl: No space left"));
  CHECK_THAT(journal.write_error(), Catch::Contains("kept in " + kept + "/abc123.jsonl"));
  // Nothing is lost: the header and both records are in the kept journal.
  auto result = runner::result_from_journal(journal.path());
  CHECK(result["schema"] == "isoharness.result/v1");
  REQUIRE(result["sandboxes"].size() == 2);
  CHECK(result["sandboxes"][1]["id"] == "s2");
  CHECK(fs::status(kept).permissions() == fs::perms::owner_all);
}

TEST_CASE("a journal that writes fine stays in --out with no error", "[runner]") {
  test::TempDir tmp("ih-journal");
  runner::Journal journal(tmp.str(), {{"schema", "isoharness.result/v1"}}, tmp.str() + "/kept");
  journal.append("sandbox", {{"id", "s1"}});
  CHECK(journal.path() == tmp.str() + "/journal.jsonl");
  CHECK(journal.write_error().empty());
  CHECK(runner::result_from_journal(journal.path())["sandboxes"].size() == 1);
  CHECK_FALSE(fs::exists(tmp.str() + "/kept"));
}

TEST_CASE("a result that cannot be written names the file and where the journal is", "[runner]") {
  test::TempDir tmp("ih-journal");
  runner::Journal journal(tmp.str(), {{"schema", "isoharness.result/v1"}}, tmp.str() + "/kept");
  // The result is written to result.json.tmp-<pid> first (common::write_file_atomically).
  fs::create_symlink("/dev/full", tmp.str() + "/result.json.tmp-" + std::to_string(::getpid()));
  try {
    journal.finalise({{"summary", "x"}});
    FAIL("finalise wrote to /dev/full");
  } catch (const std::exception& e) {
    CHECK_THAT(e.what(), Catch::Contains("cannot write " + tmp.str() + "/result.json.tmp"));
    CHECK_THAT(e.what(),
               Catch::Contains("every finished sandbox is in the journal " + tmp.str() + "/journal.jsonl"));
  }
}

TEST_CASE("report rebuilds result.json and the reports from a journal, verdict error", "[runner]") {
  test::TempDir tmp("ih-journal");
  // A journal as a run writes it (header, one line per sandbox), cut mid-line at the end.
  auto full =
      nlohmann::json::parse(std::ifstream(test::source_dir() + "/tests/fixtures/reports/result.json"));
  nlohmann::json header = full;
  header.erase("sandboxes");
  header.erase("summary");
  header["kind"] = "header";
  const std::string journal = tmp.str() + "/journal.jsonl";
  {
    std::ofstream out(journal);
    out << header.dump() << "\n";
    for (auto s : full["sandboxes"]) {
      s["kind"] = "sandbox";
      out << s.dump() << "\n";
    }
    out << "{\"kind\": \"sandbox\", \"id\": \"s9\", \"che";  // the crash
  }
  const std::string out_dir = tmp.str() + "/rebuilt";
  auto outcome = runner::report_from_journal(journal, out_dir);
  CHECK(outcome.exit_code == kExitInfrastructure);
  CHECK(outcome.result_path == out_dir + "/result.json");
  const auto& result = outcome.result;
  CHECK(result["sandboxes"].size() == full["sandboxes"].size());
  CHECK(result["summary"]["verdict"] == "error");
  CHECK(result["summary"]["fail"] == full["summary"]["fail"]);  // the checks as they were
  CHECK(result["summary"]["planned_sandboxes"].is_null());
  CHECK_THAT(result["summary"]["infrastructure_error"].get<std::string>(), Catch::Contains("did not finish"));
  CHECK(nlohmann::json::parse(std::ifstream(out_dir + "/result.json")) == result);
  CHECK(fs::exists(out_dir + "/report.md"));

  // What is not a journal is refused by name.
  std::ofstream(tmp.str() + "/notes.txt") << "{\"kind\": \"sandbox\"}\n";
  CHECK_THROWS_WITH(runner::report_from_journal(tmp.str() + "/notes.txt", out_dir),
                    Catch::Contains("notes.txt: not an isoharness journal"));
}
