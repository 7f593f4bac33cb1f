#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "probes/core/sha256.h"

using namespace isoprobe;

TEST_CASE("sha256 matches the FIPS 180-4 examples", "[probe]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the length no longer fits the first block's padding.
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256 gives the same digest however the input is split", "[probe]") {
  std::string data;
  for (int i = 0; i < 300; ++i) data.push_back(static_cast<char>(i * 7 + 3));
  for (std::size_t len : {0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 300}) {
    const std::string whole = sha256_hex(std::string_view(data).substr(0, len));
    for (std::size_t step : {1, 3, 64, 65}) {
      Sha256 sha;
      for (std::size_t at = 0; at < len; at += step) sha.update(data.data() + at, std::min(step, len - at));
      INFO("length " << len << ", step " << step);
      CHECK(sha.hex_digest() == whole);
    }
  }
}

TEST_CASE("sha256_file hashes a regular file and refuses what it must not read", "[probe]") {
  char path[] = "/tmp/isoprobe-sha256-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::close(fd);
  const std::string content(200000, 'x');
  std::ofstream(path, std::ios::binary) << content;
  std::string error;
  auto digest = sha256_file(path, 1 << 20, &error);
  REQUIRE(digest);
  CHECK(digest->bytes == content.size());
  CHECK(digest->sha256 == sha256_hex(content));

  CHECK_FALSE(sha256_file(path, 1000, &error));  // longer than the bound
  CHECK_THAT(error, Catch::Contains("longer than 1000 bytes"));
  CHECK_FALSE(sha256_file("/tmp", 1 << 20, &error));  // a directory
  CHECK_THAT(error, Catch::Contains("not a regular file"));
  ::unlink(path);
  CHECK_FALSE(sha256_file(path, 1 << 20, &error));  // gone
  CHECK_THAT(error, Catch::Contains(path));
}
