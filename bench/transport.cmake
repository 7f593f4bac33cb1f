# Transport: execs through one jumphost connection (libssh2) against OpenSSH `ssh -J` in a
# loop, side by side. Needs root; run: build/bench/transport_bench [N]
add_executable(transport_bench transport_bench.cpp ${CMAKE_SOURCE_DIR}/tests/system/transport_world.cc)
target_link_libraries(transport_bench PRIVATE isoharness::transport isoharness::common fmt::fmt)
