isoharness_test(local_test SOURCES unit/local_test.cpp unit/local_net_test.cpp unit/local_siblings_test.cpp unit/local_service_settings_test.cpp unit/local_escape_test.cpp unit/local_witness_test.cpp unit/local_node_view_test.cpp unit/local_up_record_test.cpp LIBS isoharness::deploy_local)
# The world helper's name proxy: its decision on a connection's first bytes.
isoharness_test(local_name_proxy_test
  SOURCES unit/local_name_proxy_test.cpp ${CMAKE_SOURCE_DIR}/harness/deploy/local/tools/name_proxy.cc
  LIBS isoprobe_core)
