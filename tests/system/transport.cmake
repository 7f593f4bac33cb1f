isoharness_test(transport_system_test SYSTEM TIMEOUT 300
  SOURCES system/transport_system_test.cpp system/transport_world.cc
  LIBS isoharness::transport)
# The operator's witness log read over SSH (SFTP) by the hawk backend, against a real sshd.
isoharness_test(witness_ssh_system_test SYSTEM TIMEOUT 300
  SOURCES system/witness_ssh_system_test.cpp system/transport_world.cc
  LIBS isoharness::transport isoharness::deploy_hawk isoharness::scenario)
