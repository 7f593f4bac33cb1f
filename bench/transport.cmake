# Transport: execs through one jumphost connection (libssh2) against OpenSSH `ssh -J` in a
# loop, side by side. Needs root; run: build/bench/transport_bench [N]
add_executable(transport_bench transport_bench.cpp ${CMAKE_SOURCE_DIR}/tests/system/transport_world.cc)
target_link_libraries(transport_bench PRIVATE isoharness::transport isoharness::common fmt::fmt)

# The agent upload over a far jumphost link (the local world's delay relay, rtt 40 ms):
# plain against packed (xz + isoprobe-unxz), both in one run.
#   sudo build/bench/upload_far_bench [--runs 5] [--rtt-ms 40]
add_executable(upload_far_bench upload_far_bench.cc)
target_link_libraries(upload_far_bench PRIVATE isoharness::deploy_local isoharness::transport)
target_compile_definitions(upload_far_bench PRIVATE ISOHARNESS_BINARY_DIR="${CMAKE_BINARY_DIR}")
add_dependencies(upload_far_bench isoharness-world-helper isoprobe_bundle)
