# reports/: Markdown, JUnit, JSON and parity renderers against golden files
# (tests/golden/*.approved.*); headless Chromium on the parity page (a screenshot) and on the
# run page (over the DevTools protocol: no console error, no request outside the file; a
# screenshot): about 7 s, label "browser" as well, so `ctest -LE browser` can leave it out.
isoharness_test(reports_test SOURCES unit/reports_test.cpp unit/reports_run_test.cpp unit/reports_fixture.cpp
  LIBS isoharness::reports isoharness::parity)
isoharness_test(reports_browser_test SOURCES unit/reports_browser_test.cpp unit/reports_fixture.cpp unit/browser_screenshot.cpp
  unit/browser_devtools.cpp
  LIBS isoharness::reports isoharness::parity z TIMEOUT 180)
set_tests_properties(reports_browser_test PROPERTIES LABELS "unit;browser")
