# The Debian package built from this tree, unpacked into a scratch root and run from `/`.
isoharness_test(install_system_test SYSTEM TIMEOUT 1500
  SOURCES system/install_system_test.cpp system/local_test_support.cpp
  LIBS isoharness::common isoharness::deploy_local nlohmann_json::nlohmann_json)
add_dependencies(install_system_test isoharness isoharness-world-helper isoprobe_bundle getpid_static)
