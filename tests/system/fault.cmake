# Injected faults through the real `isoharness` binary: fault_test.cpp (--out
# read-only or full, runsc missing, nftables refusing a rule) and fault_midrun_test.cpp
# (the jumphost's sshd or the sandbox killed mid-probe, SIGINT and SIGTERM).
isoharness_test(fault_test SYSTEM TIMEOUT 1800
  SOURCES system/fault_test.cpp system/fault_midrun_test.cpp system/fault_support.cc
  system/local_test_support.cpp
  LIBS isoharness::deploy_local)
add_dependencies(fault_test isoharness isoharness-world-helper isoprobe_bundle)
