# Injected faults through the real `isoharness run` (issue 11): tests/system/fault_test.cpp.
isoharness_test(fault_test SYSTEM TIMEOUT 1200
  SOURCES system/fault_test.cpp system/local_test_support.cpp
  LIBS isoharness::deploy_local)
add_dependencies(fault_test isoharness isoharness-world-helper isoprobe_bundle)
