// The shared text and file helpers (harness/common/text.h).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "harness/common/text.h"
#include "tests/support/test_support.h"

using namespace isoharness;
namespace fs = std::filesystem;

TEST_CASE("trim drops ASCII whitespace at both ends only", "[common]") {
  CHECK(common::trim("  ssh-ed25519 AAAA key\r\n") == "ssh-ed25519 AAAA key");
  CHECK(common::trim("\t a b \t") == "a b");
  CHECK(common::trim(" \r\n\t") == "");
  CHECK(common::trim("") == "");
  CHECK(common::trim("x") == "x");
}

TEST_CASE("write_file_atomically replaces the whole file or leaves it, never a temporary", "[common]") {
  test::TempDir dir("ih-atomic");
  const std::string path = dir.str() + "/out.txt";
  REQUIRE(common::write_file_atomically(path, "first"));
  REQUIRE(common::write_file_atomically(path, "second, longer"));
  CHECK(test::read_text(path) == "second, longer");
  // A write that fails (the temporary is /dev/full) keeps the old file and names the cause.
  fs::create_symlink("/dev/full", path + ".tmp-" + std::to_string(::getpid()));
  const auto failed = common::write_file_atomically(path, "third");
  REQUIRE_FALSE(failed);
  CHECK_THAT(failed.error().message,
             Catch::Contains("cannot write " + path + ".tmp-") && Catch::Contains("No space left"));
  CHECK(test::read_text(path) == "second, longer");
  CHECK(std::distance(fs::directory_iterator(dir.str()), fs::directory_iterator{}) == 1);
}
