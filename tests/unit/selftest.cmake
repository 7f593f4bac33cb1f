# harness/selftest without sandboxes: catalogue, jobs, judging, renderers, and the local
# backend's weakenings (nft script and OCI edits).
isoharness_test(selftest_test SOURCES unit/selftest_test.cpp
  LIBS isoharness::selftest isoharness::deploy_local isoharness::reports isoharness::policy isoharness::scenario)
