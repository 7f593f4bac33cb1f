# harness/baselines: parsing baseline files, every record of a 24-record file assessed
# against a real SQLite history of parity nights made from the real report fixtures and
# checked against a hand computation, the command's exit codes and files, and the page in
# headless Chromium (baselines_browser_test, label "browser" as well, so `ctest -LE browser`
# can leave it out).
isoharness_test(baselines_test SOURCES unit/baselines_test.cpp unit/baselines_assess_test.cpp
  unit/baselines_deployment_test.cpp
  unit/baselines_fixture.cpp LIBS isoharness::baselines isoharness::scenario isoharness::reports)
isoharness_test(baselines_cli_test SOURCES unit/baselines_cli_test.cpp unit/baselines_fixture.cpp
  unit/browser_screenshot.cpp LIBS isoharness::baselines isoharness::reports z TIMEOUT 240)
add_dependencies(baselines_cli_test isoharness)
add_test(NAME baselines_browser_test COMMAND baselines_cli_test "[browser]")
set_tests_properties(baselines_browser_test PROPERTIES LABELS "unit;browser" TIMEOUT 240)
# Named mixes in scenarios (harness/scenario), kept apart from scenario_test.cpp.
isoharness_test(scenario_mixes_test SOURCES unit/scenario_mixes_test.cpp LIBS isoharness::scenario)
