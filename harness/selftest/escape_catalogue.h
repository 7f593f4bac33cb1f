// Internal to selftest: the weakenings of the escape classes (docs/SECURITY.md, "Escape
// classes"), appended to the catalogue by catalogue.cc.
#pragma once

#include <vector>

#include "harness/selftest/catalogue.h"

namespace isoharness::selftest {

void append_escape_weakenings(std::vector<Weakening>& w);

}  // namespace isoharness::selftest
