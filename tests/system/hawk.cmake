# System tests of the hawk backend and `isoharness check`: the real binary against the
# stand-in hawk CLI (tests/hawk_standin/hawk), which runs real sandboxes with `local up`.
isoharness_test(hawk_system_test SYSTEM TIMEOUT 3000
  SOURCES system/hawk_system_test.cpp system/local_test_support.cpp
  LIBS isoharness::runner isoharness::deploy_local)
add_dependencies(hawk_system_test isoharness isoharness-world-helper isoprobe_bundle)

# `parity --backend hawk` through the stand-in, whose nodes are the local node classes,
# scheduled by the profile's nodeSelector and tolerations (about 3 minutes).
isoharness_test(hawk_parity_system_test SYSTEM TIMEOUT 900
  SOURCES system/hawk_parity_system_test.cpp system/local_test_support.cpp
  LIBS isoharness::runner isoharness::deploy_local)
add_dependencies(hawk_parity_system_test isoharness isoharness-world-helper isoprobe_bundle getpid_static)

# Every eval of a night on one network through the stand-in, and the platform's own ingress
# rules (HAWK_STANDIN_INGRESS) failing the peer checks; accepted by name, a known risk.
isoharness_test(hawk_network_system_test SYSTEM TIMEOUT 3000
  SOURCES system/hawk_network_system_test.cpp system/local_test_support.cpp
  LIBS isoharness::runner isoharness::deploy_local)
add_dependencies(hawk_network_system_test isoharness isoharness-world-helper isoprobe_bundle)
