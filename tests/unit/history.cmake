# harness/history: the database against real SQLite and a PostgreSQL server of its own, drift over recorded nights, the
# change-point statistics on synthetic series with a known truth (prints detection and
# false-positive rates, a few seconds), and the drift page in headless Chromium (label
# "browser" as well, so `ctest -LE browser` can leave it out).
isoharness_test(history_test SOURCES unit/history_test.cpp unit/history_fixture.cpp
  LIBS isoharness::history isoharness::reports)
isoharness_test(history_change_points_test SOURCES unit/history_change_points_test.cpp unit/history_fixture.cpp
  LIBS isoharness::history)
isoharness_test(history_browser_test SOURCES unit/history_browser_test.cpp unit/history_fixture.cpp
  unit/browser_screenshot.cpp LIBS isoharness::history isoharness::reports z TIMEOUT 180)
set_tests_properties(history_browser_test PROPERTIES LABELS "unit;browser")
