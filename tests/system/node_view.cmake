# Posture judged from outside through the real run path: tests/system/node_view_system_test.cpp.
isoharness_test(node_view_system_test SYSTEM TIMEOUT 900
  SOURCES system/node_view_system_test.cpp system/local_test_support.cpp
  LIBS isoharness::runner isoharness::selftest isoharness::deploy_local)
add_dependencies(node_view_system_test isoharness-world-helper isoprobe_bundle isoprobe_posture)
