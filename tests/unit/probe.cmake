# isoprobe: parser, registry and runner tests on fixture text, and the egress engine
# against servers on 127.0.0.1 in a network namespace the test creates.
isoharness_test(probe_parsers_test
  SOURCES unit/probe_status_test.cpp unit/probe_mountinfo_test.cpp unit/probe_id_map_test.cpp
          unit/probe_kallsyms_test.cpp unit/probe_dns_test.cpp unit/probe_resolv_conf_test.cpp
          unit/probe_target_spec_test.cpp unit/probe_text_util_test.cpp unit/probe_sha256_test.cpp
          unit/probe_tls_hello_test.cpp
  LIBS isoprobe_core)
isoharness_test(probe_registry_test
  SOURCES unit/probe_registry_test.cpp unit/probe_runner_test.cpp unit/probe_child_test.cpp
  LIBS isoprobe_core)
isoharness_test(probe_egress_test SOURCES unit/probe_egress_test.cpp unit/probe_peer_test.cpp LIBS isoprobe_core)
