# isoprobe posture time (no egress) on the host, under runc and under runsc-ptrace,
# median of N runs each, printed side by side. Run as root:
#   build/bench/probe_posture_bench [--runs N]
# Targets (issue 3): <= 0.3 s under runc, <= 1.5 s under runsc-ptrace.
add_executable(probe_posture_bench
  ${CMAKE_CURRENT_SOURCE_DIR}/probe_posture_bench.cpp
  ${CMAKE_SOURCE_DIR}/tests/system/probe_oci.cpp)
target_link_libraries(probe_posture_bench PRIVATE isoharness::common nlohmann_json::nlohmann_json)
target_compile_definitions(probe_posture_bench PRIVATE ISOHARNESS_BINARY_DIR="${CMAKE_BINARY_DIR}")
add_dependencies(probe_posture_bench isoprobe_bundle)
