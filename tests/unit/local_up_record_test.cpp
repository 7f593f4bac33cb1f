// What `local up` leaves for `check` (harness/deploy/local/up_record.h): a record is read
// only when it is one, and a sandbox is found only by its whole route, in a live run.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "harness/deploy/local/up_record.h"
#include "tests/support/test_support.h"

using namespace isoharness;
using namespace isoharness::deploy::local;

namespace {

UpRecord record(const std::string& run) {
  UpRecord r;
  r.run_id = run;
  r.name = "manual";
  r.route.jump = {"198.51.100.130", 22, "jump", "ssh-ed25519 AAAAjump"};
  r.route.sandbox = {"192.0.2.10", 2222, "agent", "ssh-ed25519 AAAAsandbox"};
  r.containers = {{"default", container_id(run, "manual")}, {"scorer", container_id(run, "manual-scorer")}};
  return r;
}

}  // namespace

TEST_CASE("an up record reads back, and a container of another run's naming is refused", "[local]") {
  std::string why;
  auto back = parse_up_record(to_json(record("abc")).dump(), why);
  REQUIRE(back);
  CHECK(back->route.sandbox.port == 2222);
  CHECK(back->route.jump.host_key == "ssh-ed25519 AAAAjump");
  REQUIRE(back->containers.size() == 2);
  CHECK(back->containers[1].id == "ih-abc-manual-scorer.c");

  auto doc = to_json(record("abc"));
  doc["containers"][0]["id"] = "ih-other-manual.c";
  CHECK_FALSE(parse_up_record(doc.dump(), why));
  doc["containers"][0]["id"] = "docker-thing";
  CHECK_FALSE(parse_up_record(doc.dump(), why));
  doc = to_json(record("abc"));
  doc["containers"][0]["service"] = "scorer";
  CHECK_FALSE(parse_up_record(doc.dump(), why));
  doc = to_json(record("abc"));
  doc["sandbox"]["port"] = "2222";
  CHECK_FALSE(parse_up_record(doc.dump(), why));
  CHECK_FALSE(parse_up_record("[]", why));
  CHECK_FALSE(parse_up_record("not json", why));
}

TEST_CASE("check finds a local up sandbox only by its whole route, in a live run", "[local]") {
  test::TempDir state;
  const RunPaths paths{state.str(), "uprec1"};
  claim_run(paths);  // this process is its owner: alive
  write_up_record(paths, record("uprec1"));

  auto route = record("uprec1").route;
  auto found = find_up_sandbox(state.str(), route);
  INFO(found.note);
  REQUIRE(found.record);
  CHECK(found.record->name == "manual");
  auto refs = container_refs(state.str(), *found.record);
  REQUIRE(refs.size() == 2);
  CHECK(refs[0].service == "default");
  CHECK(refs[0].runc_root == state.str() + "/uprec1/runc");
  CHECK(refs[1].runsc_root == state.str() + "/uprec1/runsc");

  auto unpinned = route;  // --accept-new-host-keys: the addresses alone decide
  unpinned.sandbox.host_key.clear();
  CHECK(find_up_sandbox(state.str(), unpinned).record);

  auto other = route;
  other.sandbox.host_key = "ssh-ed25519 AAAAelse";
  CHECK_FALSE(find_up_sandbox(state.str(), other).record);
  other = route;
  other.sandbox.port = 22;
  CHECK_FALSE(find_up_sandbox(state.str(), other).record);
  other = route;
  other.jump.host = "198.51.100.134";
  auto missing = find_up_sandbox(state.str(), other);
  CHECK_FALSE(missing.record);
  CHECK_THAT(missing.note, Catch::Contains("no live `local up` run"));

  // A second record for the same route: neither is taken.
  auto twin = record("uprec1");
  twin.name = "twin";
  write_up_record(paths, twin);
  auto both = find_up_sandbox(state.str(), route);
  CHECK_FALSE(both.record);
  CHECK_THAT(both.note, Catch::Contains("2 live"));
  remove_up_record(paths, "twin");
  CHECK(find_up_sandbox(state.str(), route).record);

  // A run whose owner is gone is not believed.
  std::ofstream(paths.dir() + "/run.json") << R"({"run_id": "uprec1", "pid": 999999999, "start_time": 1})";
  CHECK_FALSE(find_up_sandbox(state.str(), route).record);
}
