# System tests of `isoharness selftest`: real sandboxes under runc and gVisor, weakened.
isoharness_test(selftest_system_test SYSTEM TIMEOUT 1500
  SOURCES system/selftest_system_test.cpp system/local_test_support.cpp
  LIBS isoharness::deploy_local)
add_dependencies(selftest_system_test isoharness isoharness-world-helper isoprobe_bundle)
