isoharness_test(transport_system_test SYSTEM TIMEOUT 300
  SOURCES system/transport_system_test.cpp system/transport_world.cc
  LIBS isoharness::transport)
