# System tests of sibling services: `isoharness run` on scenarios/siblings.yaml under real
# runc and runsc, and the node policy weakened behind the plan's back.
isoharness_test(sibling_system_test SYSTEM TIMEOUT 1500
  SOURCES system/sibling_system_test.cpp system/local_test_support.cpp
  LIBS isoharness::runner isoharness::deploy_local)
add_dependencies(sibling_system_test isoharness isoharness-world-helper isoprobe_bundle)
