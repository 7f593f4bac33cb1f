isoharness_test(verify_test SOURCES
  unit/verify_test.cpp
  unit/verify_siblings_test.cpp
  unit/verify_schema_test.cpp
  unit/verify_escape_test.cpp
  unit/verify_witness_test.cpp
  unit/verify_raw_sockets_test.cpp
  unit/verify_probe_list_test.cpp
  unit/verify_peers_test.cpp
  unit/verify_runtime_version_test.cpp
  unit/egress_verdict_test.cpp
  unit/node_view_test.cpp
  unit/node_agent_test.cpp
  unit/verify_node_test.cpp
  unit/sandbox_facts_test.cpp
  LIBS isoharness::verify isoharness::policy isoharness::scenario)
