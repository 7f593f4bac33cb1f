#include <catch2/catch.hpp>

#include "probes/core/capability_names.h"
#include "probes/core/proc_status.h"
#include "tests/unit/probe_fixture.h"

using namespace isoprobe;

TEST_CASE("status of a root process on the host", "[probe]") {
  ProcStatus st = parse_proc_status(probe_fixture("status_host.txt"));
  CHECK(st.problems.empty());
  REQUIRE(st.cap_eff);
  CHECK(*st.cap_eff == 0x000001fffeffffffULL);
  CHECK(*st.cap_inh == 0);
  CHECK(*st.cap_amb == 0);
  CHECK(st.no_new_privs == 0);
  CHECK(st.seccomp == 0);
  REQUIRE(st.uid);
  CHECK((*st.uid)[0] == 0);
  REQUIRE(st.groups);
  CHECK(st.groups->empty());  // "Groups:\t " holds no ids
}

TEST_CASE("status with every capability dropped, no_new_privs and a filter", "[probe]") {
  ProcStatus st = parse_proc_status(probe_fixture("status_runc_dropped.txt"));
  CHECK(st.problems.empty());
  CHECK(st.cap_eff == 0ULL);
  CHECK(st.cap_bnd == 0ULL);
  CHECK(st.no_new_privs == 1);
  CHECK(st.seccomp == 2);
  REQUIRE(st.uid);
  CHECK((*st.uid)[1] == 1000);
  REQUIRE(st.groups);
  CHECK(*st.groups == std::vector<std::int64_t>{1000, 27});
}

TEST_CASE("truncated status keeps what it has and misses the rest", "[probe]") {
  ProcStatus st = parse_proc_status(probe_fixture("status_truncated.txt"));
  CHECK(st.uid);
  CHECK_FALSE(st.cap_eff);
  CHECK_FALSE(st.seccomp);
}

TEST_CASE("hostile status: nothing malformed is believed", "[probe]") {
  ProcStatus st = parse_proc_status(probe_fixture("status_hostile.txt"));
  CHECK_FALSE(st.cap_inh);  // 17 hex digits
  CHECK_FALSE(st.cap_prm);
  CHECK_FALSE(st.cap_eff);
  CHECK(st.cap_bnd == 0xffffffffffffffffULL);
  CHECK_FALSE(st.no_new_privs);
  CHECK_FALSE(st.seccomp);
  CHECK_FALSE(st.uid);
  CHECK_FALSE(st.gid);
  CHECK_FALSE(st.groups);
  CHECK(st.problems.size() >= 8);
  bool names_line = false;
  for (const auto& p : st.problems) names_line = names_line || p.rfind("line 3: CapPrm", 0) == 0;
  CHECK(names_line);
}

TEST_CASE("binary junk and huge input do not break the status parser", "[probe]") {
  std::string junk(200000, '\0');
  for (std::size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>((i * 131) % 251);
  ProcStatus st = parse_proc_status(junk);
  CHECK_FALSE(st.cap_eff);
  CHECK(parse_proc_status("").problems.empty());
}

TEST_CASE("capability names", "[probe]") {
  CHECK(capability_name(21) == "CAP_SYS_ADMIN");
  CHECK(capability_name(40) == "CAP_CHECKPOINT_RESTORE");
  CHECK(capability_name(55) == "CAP_55");
  // containerd's default set
  auto names = capability_names(0xa80425fbULL);
  CHECK(names.size() == 14);
  CHECK(std::find(names.begin(), names.end(), "CAP_NET_RAW") != names.end());
  CHECK(std::find(names.begin(), names.end(), "CAP_SYS_ADMIN") == names.end());
  auto gvisor = capability_names(0xa80405fbULL);
  CHECK(std::find(gvisor.begin(), gvisor.end(), "CAP_NET_RAW") == gvisor.end());
  CHECK(capability_names(0).empty());
}
