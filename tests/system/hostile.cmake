# Hostile sandboxes through the real run path: tests/system/hostile_sandbox_test.cpp.
isoharness_test(hostile_sandbox_test SYSTEM TIMEOUT 1200
  SOURCES system/hostile_sandbox_test.cpp system/local_test_support.cpp
  LIBS isoharness::runner isoharness::deploy_local)
add_dependencies(hostile_sandbox_test isoharness-world-helper isoprobe_bundle)
