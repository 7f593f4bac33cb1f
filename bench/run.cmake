# `isoharness run` at scale: posture of 1, 8, 16 and 32 sandboxes through one jumphost
# (libssh2, parallel sessions) against the same probes done by OpenSSH `ssh -J` for all
# sandboxes at once (and one by one with --sequential), side by side. Needs root; run:
# build/bench/run_posture_bench [--max 32] [--parallel P] [--sequential]
add_executable(run_posture_bench ${CMAKE_CURRENT_LIST_DIR}/run_posture_bench.cc)
target_link_libraries(run_posture_bench PRIVATE isoharness::runner)
target_compile_definitions(run_posture_bench PRIVATE ISOHARNESS_SOURCE_DIR_BENCH="${CMAKE_SOURCE_DIR}")
add_dependencies(run_posture_bench isoharness-world-helper isoprobe_bundle isoprobe_posture)
