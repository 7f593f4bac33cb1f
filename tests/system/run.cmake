# System tests of `isoharness run`: real sandboxes, reached through the jumphost.
isoharness_test(run_system_test SYSTEM TIMEOUT 1200
  SOURCES system/run_system_test.cpp system/local_test_support.cpp
  LIBS isoharness::runner isoharness::deploy_local)
add_dependencies(run_system_test isoharness isoharness-world-helper isoprobe_bundle)

# System test of `isoharness parity`: the real binary, real runc and runsc cells.
isoharness_test(parity_system_test SYSTEM TIMEOUT 900
  SOURCES system/parity_system_test.cpp system/local_test_support.cpp
  LIBS isoharness::runner isoharness::deploy_local)
add_dependencies(parity_system_test isoharness isoharness-world-helper isoprobe_bundle getpid_static)
