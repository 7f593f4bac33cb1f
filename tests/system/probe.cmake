# isoprobe system tests: the bundle on the host, in a minimal runc container (rootfs =
# the bundle only, capabilities dropped, no_new_privs, seccomp) and under runsc-ptrace.
isoharness_test(probe_system_test SYSTEM
  SOURCES system/probe_system_test.cpp system/probe_oci.cpp
  LIBS isoharness::common nlohmann_json::nlohmann_json)
add_dependencies(probe_system_test isoprobe_bundle)
