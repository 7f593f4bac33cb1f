// An index drawn uniformly from the raw output of std::mt19937_64, for resampling and
// permutation tests whose results must be the same with every standard library:
// std::uniform_int_distribution differs between them, the generator's sequence does not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>

namespace isoharness {

// Unbiased draw in [0, n), n > 0: the top partial range of the generator is rejected.
inline std::size_t draw_index(std::mt19937_64& rng, std::size_t n) {
  const std::uint64_t range = n;
  const std::uint64_t limit = std::mt19937_64::max() - std::mt19937_64::max() % range;
  std::uint64_t x = rng();
  while (x >= limit) x = rng();
  return static_cast<std::size_t>(x % range);
}

}  // namespace isoharness
