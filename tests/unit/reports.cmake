# reports/: Markdown, JUnit, JSON and parity renderers against golden files
# (tests/golden/*.approved.*), and a headless-Chromium screenshot of the parity page
# (about 3 s; label "browser" as well, so `ctest -LE browser` can leave it out).
isoharness_test(reports_test SOURCES unit/reports_test.cpp unit/reports_run_test.cpp unit/reports_fixture.cpp
  LIBS isoharness::reports isoharness::parity)
isoharness_test(reports_browser_test SOURCES unit/reports_browser_test.cpp unit/reports_fixture.cpp unit/browser_screenshot.cpp
  LIBS isoharness::reports isoharness::parity z TIMEOUT 180)
set_tests_properties(reports_browser_test PROPERTIES LABELS "unit;browser")
