// The typed JSON readers: a member of the wrong type reads as absent (and, through a
// JsonReader, as a schema problem); nothing here may throw on what a document holds.
#include <catch2/catch.hpp>

#include "harness/common/json_read.h"

using namespace isoharness;
using nlohmann::json;

TEST_CASE("typed JSON readers turn a wrong type into absence, never an exception", "[common]") {
  const json doc = {{"name", {{"x", 1}}}, {"n", "7"}, {"ok", 1},   {"big", 18446744073709551615ULL},
                    {"s", "text"},        {"i", -3},  {"b", true}, {"list", {"a", 2, "b"}}};
  CHECK_FALSE(common::json_string(doc, "name"));
  CHECK_FALSE(common::json_int(doc, "n"));
  CHECK_FALSE(common::json_bool(doc, "ok"));
  CHECK_FALSE(common::json_int(doc, "big"));  // does not fit a signed 64-bit integer
  CHECK(common::json_string(doc, "s") == "text");
  CHECK(common::json_int(doc, "i") == -3);
  CHECK(common::json_number(doc, "i") == -3.0);
  CHECK(common::json_bool(doc, "b") == true);
  CHECK(common::json_string_or(doc, "name", "?") == "?");
  CHECK(common::json_strings(doc, "list") == std::vector<std::string>{"a", "b"});
  CHECK_FALSE(common::json_string(json::array({1}), "s"));  // not an object at all
  CHECK_FALSE(common::json_array(doc, "s"));
  CHECK(common::json_object(doc, "name") != nullptr);
}

TEST_CASE("a JsonReader records each member of the wrong type as a schema problem", "[common]") {
  const json doc = {{"name", {{"x", 1}}}, {"count", "3"}, {"gone", nullptr}, {"fine", "yes"}};
  common::JsonReader r;
  CHECK_FALSE(r.string(doc, "name", "pod"));
  CHECK_FALSE(r.integer(doc, "count", "pod"));
  CHECK_FALSE(r.boolean(doc, "gone", "pod"));    // null: absent, not a problem
  CHECK_FALSE(r.number(doc, "missing", "pod"));  // absent: not a problem either
  CHECK(r.string(doc, "fine", "pod") == "yes");
  CHECK(r.problems() == std::vector<std::string>{"pod.name: not a string", "pod.count: not an integer"});
}
