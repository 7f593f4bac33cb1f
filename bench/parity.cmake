# Parity statistics: what compare() and combine() cost (Google Benchmark), and an A/A run of
# the CPU control on this host through isoprobe, interleaved, which must read parity at
# about 1.00 with a tight interval (the noise floor). Run: build-dir/bench/parity_aa_bench
add_executable(parity_stats_bench ${CMAKE_CURRENT_SOURCE_DIR}/parity_stats_bench.cc)
target_link_libraries(parity_stats_bench PRIVATE isoharness::parity benchmark::benchmark)

add_executable(parity_aa_bench ${CMAKE_CURRENT_SOURCE_DIR}/parity_aa_bench.cc)
target_link_libraries(parity_aa_bench PRIVATE isoharness::parity isoharness::common nlohmann_json::nlohmann_json fmt::fmt)
target_compile_definitions(parity_aa_bench PRIVATE ISOHARNESS_BINARY_DIR="${CMAKE_BINARY_DIR}")
add_dependencies(parity_aa_bench isoprobe)
