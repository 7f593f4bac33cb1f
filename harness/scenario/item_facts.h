// Internal to the scenario module: parsing of one facts mapping.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "harness/scenario/scenario.h"

namespace isoharness::scenario {

// One "default" service, nothing declared.
ItemFacts default_item_facts();

// Applies the facts mapping v (at pointer in source) on top of f. Keys in extra_keys are
// accepted and ignored (the caller interprets them). Problems go to errors.
void apply_facts(const nlohmann::json& v, const std::string& pointer, const SourceMap& source, ItemFacts& f,
                 std::vector<Diagnostic>& errors, const std::set<std::string>& extra_keys = {});

}  // namespace isoharness::scenario
