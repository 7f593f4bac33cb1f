# System test of the allow list's scope: `isoharness run` on a scenario listing a domain and
# a CIDR, under runc and gVisor (the local world's name proxy and port-scoped rules).
isoharness_test(allow_list_system_test SYSTEM TIMEOUT 900
  SOURCES system/allow_list_system_test.cpp system/local_test_support.cpp
  LIBS isoharness::runner isoharness::deploy_local)
add_dependencies(allow_list_system_test isoharness isoharness-world-helper isoprobe_bundle isoprobe_posture)
