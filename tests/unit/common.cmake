isoharness_test(common_test SOURCES unit/common_test.cpp LIBS isoharness::common)
