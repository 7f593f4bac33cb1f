# System test of the escape classes: `local up` with an escape added, `check` against a
# strict item, and what `local up` refuses (real runc, runsc, sshd, nftables).
isoharness_test(escape_system_test SYSTEM TIMEOUT 900
  SOURCES system/escape_system_test.cpp system/local_test_support.cpp
  LIBS isoharness::runner isoharness::deploy_local)
add_dependencies(escape_system_test isoharness isoharness-world-helper isoprobe_bundle)

# hostPath sources bound by descriptor, with real mounts (root).
isoharness_test(host_path_bind_test SYSTEM TIMEOUT 120
  SOURCES system/host_path_bind_test.cpp system/local_test_support.cpp
  LIBS isoharness::deploy_local)
