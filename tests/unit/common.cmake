isoharness_test(common_test SOURCES unit/common_test.cpp unit/common_json_read_test.cpp unit/common_text_test.cpp LIBS isoharness::common)
