// Internal to selftest: the weakenings of the verifier's own evidence, appended to the
// catalogue by catalogue.cc. Each takes away what an egress verdict rests on (the outside
// witness's record of what arrived, or the drop point's record of what was stopped) and is
// caught only when no check that needed it passed (kJudgeEvidence).
#pragma once

#include <vector>

#include "harness/selftest/catalogue.h"

namespace isoharness::selftest {

void append_evidence_weakenings(std::vector<Weakening>& w);

}  // namespace isoharness::selftest
