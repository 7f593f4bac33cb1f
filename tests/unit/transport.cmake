isoharness_test(transport_test
  SOURCES unit/transport_host_key_test.cpp unit/transport_ssh_line_test.cpp
  LIBS isoharness::transport)
