// A history of nightly parity runs for the baselines tests, made from the real documents
// kept for the report tests (tests/fixtures/reports: a result's context block and a real
// four-cell parity run's samples) and recorded in a real SQLite history: twelve nights, a
// runsc upgrade at night 6 that makes every gVisor cell 35 % slower (annotated on that
// run), and a baseline file of 24 records that spans it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace isoharness::test {

inline constexpr int kNights = 12;
inline constexpr int kUpgradeNight = 6;
inline constexpr double kUpgradeSlowdown = 1.35;
inline constexpr const char* kUpgradeNote = "runsc upgraded to release-20260612.0 on every node pool";

// "b00".."b11", started 2026-06-01T02:00:00Z + night days.
std::string baseline_night_id(int night);
std::string baseline_night_started(int night);

// The result document of one night.
nlohmann::json baseline_night(int night);

// Records every night into a new database at path and annotates the upgrade night.
void make_baselines_history(const std::string& path);

// The baseline file (CSV): 24 records in runc/tier, runc/non-tier, gvisor/tier,
// gvisor/non-tier and one untimed cell (runc/gpu), recorded before and after the upgrade,
// some with the named mixes of scenarios/parity/default.yaml.
std::string baselines_csv();

// A history of two deployments, as a new user's: 5 nights on a platform (hawk/staging,
// 2026-05-01..05, gvisor/tier 1.10x runc/tier) and 20 newer nights on a local 2-core box
// (local/local-2core, 2026-05-10..29, gvisor/tier 7.8x). Each night's section carries its
// provenance; the platform's contexts keep the harness host under harness_host.
inline constexpr double kPlatformRatio = 1.10;
inline constexpr double kLocalBoxRatio = 7.8;
inline constexpr int kPlatformNights = 5;
inline constexpr int kLocalBoxNights = 20;
nlohmann::json deployment_night(bool platform, int night);
void make_two_deployment_history(const std::string& path);

}  // namespace isoharness::test
