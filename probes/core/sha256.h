// SHA-256 (FIPS 180-4) for isoprobe, which links no crypto library: the posture agent
// hashes the file it was uploaded as, so that the harness can check the upload without
// reading the whole file back over SSH (posture --verify-file, probes/README.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace isoprobe {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t n);
  // The digest as 64 lowercase hex digits. The object is spent afterwards.
  std::string hex_digest();

 private:
  void block(const unsigned char* p);

  std::array<std::uint32_t, 8> h_;
  std::array<unsigned char, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_ = 0;  // bytes hashed
};

std::string sha256_hex(std::string_view data);

struct FileDigest {
  std::uint64_t bytes = 0;
  std::string sha256;
};

// Hashes the regular file at path, reading at most max_bytes (a longer file is an error,
// as is anything that is not a regular file). On failure, error says why.
std::optional<FileDigest> sha256_file(const std::string& path, std::uint64_t max_bytes, std::string* error);

}  // namespace isoprobe
