// The runner reads a plan item into types with every key it uses required: a plan that
// lacks one is an error naming the key, never a default.
#include <catch2/catch.hpp>

#include "harness/runner/plan_item.h"

using isoharness::runner::PlanItemError;
using isoharness::runner::read_plan_item;
using nlohmann::json;

namespace {

json complete_item() {
  return {{"id", "t/0-i-0123abcd"},
          {"task", "t"},
          {"item", "i"},
          {"level", "strict"},
          {"task_index", 0},
          {"item_index", 2},
          {"runtime_class", "gvisor"},
          {"runtime_class_source", "hardened"},
          {"gpu", false},
          {"values", {{"services", {{"default", json::object()}}}}},
          {"expect", json::object()},
          {"findings", {{{"code", "c"}, {"severity", "note"}, {"message", "m"}}}}};
}

}  // namespace

TEST_CASE("plan item: every field the runner uses is read, typed", "[runner]") {
  const auto f = read_plan_item(complete_item());
  CHECK(f.id == "t/0-i-0123abcd");
  CHECK(f.level == "strict");
  CHECK(f.item_index == 2);
  CHECK(f.runtime_class == std::optional<std::string>("gvisor"));
  REQUIRE(f.findings.size() == 1);
  CHECK(f.findings[0].severity == "note");
  json node_default = complete_item();
  node_default["runtime_class"] = nullptr;
  CHECK_FALSE(read_plan_item(node_default).runtime_class.has_value());
}

TEST_CASE("plan item: a missing or mistyped key is an error that names it", "[runner]") {
  for (const char* key : {"id", "task", "item", "level", "task_index", "item_index", "runtime_class",
                          "runtime_class_source", "gpu", "findings"}) {
    INFO(key);
    json item = complete_item();
    item.erase(key);
    CHECK_THROWS_WITH(read_plan_item(item), Catch::Contains(std::string("'") + key + "'"));
    item[key] = json::array({1});
    CHECK_THROWS_AS(read_plan_item(item), PlanItemError);
  }
  json no_values = complete_item();
  no_values.erase("values");
  CHECK_THROWS_WITH(isoharness::runner::plan_values(no_values), Catch::Contains("'values'"));
}
