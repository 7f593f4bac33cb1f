#include <catch2/catch.hpp>

#include "probes/core/mountinfo.h"
#include "tests/unit/probe_fixture.h"

using namespace isoprobe;

TEST_CASE("mountinfo of this host parses completely", "[probe]") {
  MountInfo mi = parse_mountinfo(probe_fixture("mountinfo_host.txt"));
  CHECK(mi.problems.empty());
  REQUIRE(!mi.mounts.empty());
  bool has_proc = false;
  for (const auto& m : mi.mounts) has_proc = has_proc || (m.mount_point == "/proc" && m.fstype == "proc");
  CHECK(has_proc);
}

TEST_CASE("mountinfo: escapes, optional fields, read-only, 9p", "[probe]") {
  MountInfo mi = parse_mountinfo(probe_fixture("mountinfo_escaped.txt"));
  CHECK(mi.problems.empty());
  REQUIRE(mi.mounts.size() == 5);
  const auto& m = mi.mounts[2];
  CHECK(m.mount_id == 24);
  CHECK(m.parent_id == 22);
  CHECK(m.root == "/with space");
  CHECK(m.mount_point == "/mnt/my dir");
  CHECK(m.fstype == "tmpfs");
  CHECK(m.source == "tmp\tfs");
  CHECK(m.super_options == "ro,size=1024k");
  CHECK(m.read_only());
  CHECK_FALSE(mi.mounts[0].read_only());
  CHECK(mi.mounts[3].mount_point == "/run/docker.sock");
  CHECK(mi.mounts[4].mount_point == "/bad\\99escape");  // not octal: kept as written
  CHECK(mi.mounts[4].fstype == "9p");
}

TEST_CASE("mountinfo: hostile lines are reported, good ones kept", "[probe]") {
  MountInfo mi = parse_mountinfo(probe_fixture("mountinfo_hostile.txt"));
  REQUIRE(mi.mounts.size() == 2);
  CHECK(mi.mounts[0].mount_point == "/good");
  CHECK(mi.mounts[1].mount_point == "/last");
  CHECK(mi.mounts[1].super_options.empty());
  CHECK(mi.problems.size() == 5);
  CHECK(mi.problems[0].rfind("line 1:", 0) == 0);
}

TEST_CASE("mountinfo: option matching is exact and truncated input is safe", "[probe]") {
  MountInfo mi = parse_mountinfo(
      "1 0 0:1 / / rw,rootcontext=ro - ext4 x rw\n2 1 0:2 / /a nosuid,ro - ext4 y ro\n3 1 0:3 / /b r");
  REQUIRE(mi.mounts.size() == 2);
  CHECK_FALSE(mi.mounts[0].read_only());
  CHECK(mi.mounts[1].read_only());
  CHECK(mi.problems.size() == 1);
  CHECK(unescape_mount_path("a\\") == "a\\");
  CHECK(unescape_mount_path("a\\04") == "a\\04");
  CHECK(unescape_mount_path("\\134x") == "\\x");
}

TEST_CASE("mountinfo: the number of mounts is bounded", "[probe]") {
  std::string big;
  for (int i = 0; i < 10050; ++i)
    big += std::to_string(i + 2) + " 1 0:1 / /m" + std::to_string(i) + " rw - tmpfs t rw\n";
  MountInfo mi = parse_mountinfo(big);
  CHECK(mi.mounts.size() == kMaxMounts);
  CHECK_FALSE(mi.problems.empty());
}
