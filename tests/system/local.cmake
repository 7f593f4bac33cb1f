# System tests of the local backend against real runc, runsc, sshd, dnsmasq and nftables.
isoharness_test(local_system_test SYSTEM TIMEOUT 900
  SOURCES system/local_system_test.cpp system/local_test_support.cpp
  LIBS isoharness::deploy_local)
isoharness_test(local_lifecycle_test SYSTEM TIMEOUT 600
  SOURCES system/local_lifecycle_test.cpp system/local_test_support.cpp
  LIBS isoharness::deploy_local)
add_dependencies(local_lifecycle_test isoharness isoharness-world-helper)
add_dependencies(local_system_test isoharness-world-helper)
