// CPU and memory family: two controls that never enter the kernel inside the timed loop
// (a hash over 16 KiB, a 16 MiB memcpy: a sandbox runtime should not change them), and
// page faults, which do: map 1 MiB of anonymous memory, touch each of its 256 pages,
// unmap it.
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "workloads/registry.h"

namespace isoprobe::workloads {

namespace {

constexpr std::size_t kHashBytes = std::size_t{16} * 1024;
constexpr std::size_t kCopyBytes = std::size_t{16} * 1024 * 1024;
constexpr std::size_t kPage = 4096;
constexpr std::size_t kFaultPages = 256;

// FNV-1a, 64-bit: byte at a time, so the loop is CPU-bound and the same everywhere.
std::uint64_t fnv1a(const unsigned char* data, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

void run_cpu_hash(benchmark::State& state, const Env&) {
  std::vector<unsigned char> data(kHashBytes);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 131u + 7u);
  for (auto _ : state) {
    benchmark::DoNotOptimize(data.data());
    std::uint64_t h = fnv1a(data.data(), data.size());
    benchmark::DoNotOptimize(h);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(kHashBytes));
}

void run_memory_bandwidth(benchmark::State& state, const Env&) {
  std::vector<char> from(kCopyBytes, 'a');  // both touched here, outside the timing
  std::vector<char> to(kCopyBytes, 'b');
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), kCopyBytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(kCopyBytes));
}

void run_page_faults(benchmark::State& state, const Env&) {
  const std::size_t bytes = kPage * kFaultPages;
  for (auto _ : state) {
    void* mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return fail_with_errno(state, "mmap");
    auto* bytes_ptr = static_cast<volatile char*>(mem);
    for (std::size_t p = 0; p < kFaultPages; ++p) bytes_ptr[p * kPage] = 1;
    ::munmap(mem, bytes);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(kFaultPages));
}

}  // namespace

const Workload kPageFaults{
    .name = "page_faults",
    .family = "cpu_memory",
    .description = "mmap 1 MiB anonymous, write one byte to each of its 256 pages (256 faults), munmap",
    .run = run_page_faults,
};

const Workload kCpuHash{
    .name = "cpu_hash",
    .family = "cpu_memory",
    .description = "FNV-1a hash over 16 KiB in memory: CPU control, no system calls",
    .run = run_cpu_hash,
};

const Workload kMemoryBandwidth{
    .name = "memory_bandwidth",
    .family = "cpu_memory",
    .description = "memcpy of 16 MiB between two buffers already faulted in: memory-bandwidth control",
    .run = run_memory_bandwidth,
};

}  // namespace isoprobe::workloads
