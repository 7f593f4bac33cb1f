// Fixture text for the isoprobe parser tests (tests/fixtures/probe/).
#pragma once

#include <string>

#include "tests/support/test_support.h"

inline std::string probe_fixture(const std::string& name) {
  return isoharness::test::read_text(isoharness::test::source_dir() + "/tests/fixtures/probe/" + name);
}
