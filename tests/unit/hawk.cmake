isoharness_test(hawk_test SOURCES unit/hawk_status_test.cpp unit/hawk_backend_test.cpp unit/hawk_witness_test.cpp unit/hawk_hubble_test.cpp unit/hawk_standin_hubble_test.cpp
  unit/kubernetes_api_test.cpp
  LIBS isoharness::deploy_hawk isoharness::deploy_factory isoharness::scenario isoharness::verify)
