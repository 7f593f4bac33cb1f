isoharness_test(history_test SOURCES unit/history_test.cpp LIBS isoharness::history)
