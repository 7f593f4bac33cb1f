# System tests of the local backend against real runc, runsc, sshd, dnsmasq and nftables.
isoharness_test(local_system_test SYSTEM TIMEOUT 900
  SOURCES system/local_system_test.cpp system/local_test_support.cpp
  LIBS isoharness::deploy_local isoprobe_core)
isoharness_test(local_lifecycle_test SYSTEM TIMEOUT 600
  SOURCES system/local_lifecycle_test.cpp system/local_test_support.cpp
  LIBS isoharness::deploy_local)
add_dependencies(local_lifecycle_test isoharness isoharness-world-helper)
add_dependencies(local_system_test isoharness-world-helper)

# The far jumphost link (jumphost_link.rtt_ms): the world's delay relay, measured.
isoharness_test(link_system_test SYSTEM TIMEOUT 300
  SOURCES system/link_system_test.cpp system/local_test_support.cpp
  LIBS isoharness::deploy_local isoharness::transport)
add_dependencies(link_system_test isoharness-world-helper)
