# `check` of a `local up` sandbox judged on the node's view found from the run's state, and
# the node agent (`isoharness node-view`) on its container (real runc, sshd, nftables).
isoharness_test(local_check_system_test SYSTEM TIMEOUT 900
  SOURCES system/local_check_system_test.cpp system/local_test_support.cpp
  LIBS isoharness::deploy isoharness::deploy_local)
add_dependencies(local_check_system_test isoharness isoharness-world-helper isoprobe_bundle)
