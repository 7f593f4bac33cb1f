# The getpid cross-check: an independent static C loop (getpid_static) and
# `isoprobe bench --workloads getpid`, run side by side directly under runc and
# runsc-ptrace, interleaved. Run as root: build-dir/bench/workloads_getpid_crosscheck
# getpid_static itself is built in probes/ (`isoharness parity` uploads it too).
add_executable(workloads_getpid_crosscheck
  ${CMAKE_CURRENT_SOURCE_DIR}/workloads_getpid_crosscheck.cc
  ${CMAKE_SOURCE_DIR}/tests/system/workloads_container.cc)
target_link_libraries(workloads_getpid_crosscheck PRIVATE isoharness::common nlohmann_json::nlohmann_json)
target_compile_definitions(workloads_getpid_crosscheck PRIVATE
  ISOHARNESS_BINARY_DIR="${CMAKE_BINARY_DIR}"
  GETPID_STATIC_PATH="$<TARGET_FILE:getpid_static>")
add_dependencies(workloads_getpid_crosscheck getpid_static isoprobe)
if(TARGET isoprobe_bundle)
  add_dependencies(workloads_getpid_crosscheck isoprobe_bundle)
endif()

# Every workload on the host, under runc and under runsc, side by side, with the whole
# run's duration. Run as root: build-dir/bench/workloads_side_by_side
add_executable(workloads_side_by_side
  ${CMAKE_CURRENT_SOURCE_DIR}/workloads_side_by_side.cc
  ${CMAKE_SOURCE_DIR}/tests/system/workloads_container.cc)
target_link_libraries(workloads_side_by_side PRIVATE isoharness::common nlohmann_json::nlohmann_json)
target_compile_definitions(workloads_side_by_side PRIVATE ISOHARNESS_BINARY_DIR="${CMAKE_BINARY_DIR}")
add_dependencies(workloads_side_by_side isoprobe)
if(TARGET isoprobe_bundle)
  add_dependencies(workloads_side_by_side isoprobe_bundle)
endif()
