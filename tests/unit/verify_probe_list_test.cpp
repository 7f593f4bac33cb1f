// isoprobe's probe registry (probes/posture/probe_list.h) against the posture schema verify
// reads (harness/verify/posture_schema.cc): a probe whose observation the schema does not
// know fails every real sandbox's schema check, and a schema entry no probe writes is a
// control that can never be observed. Each side must name exactly the other's.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "harness/verify/checks_internal.h"

namespace {

std::vector<std::string> registered_probes() {
  std::vector<std::string> out;
#define ISOPROBE_PROBE(name) out.emplace_back(#name);
#include "probes/posture/probe_list.h"
#undef ISOPROBE_PROBE
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("every registered probe has a schema entry and every schema entry a probe", "[verify]") {
  const auto probes = registered_probes();
  const auto schema = isoharness::verify::detail::posture_observation_names();
  REQUIRE(probes.size() >= 20);
  std::vector<std::string> probe_only, schema_only;
  std::set_difference(probes.begin(), probes.end(), schema.begin(), schema.end(),
                      std::back_inserter(probe_only));
  std::set_difference(schema.begin(), schema.end(), probes.begin(), probes.end(),
                      std::back_inserter(schema_only));
  INFO("probes without a schema entry: " << probe_only.size()
                                         << ", schema entries without a probe: " << schema_only.size());
  CHECK(probe_only == std::vector<std::string>{});
  CHECK(schema_only == std::vector<std::string>{});
}
