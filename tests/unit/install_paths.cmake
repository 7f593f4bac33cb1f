# The lookup of shipped files (harness/common/install_paths.h) on scratch trees.
isoharness_test(install_paths_test SOURCES unit/install_paths_test.cpp LIBS isoharness::common)
