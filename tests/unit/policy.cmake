# Scenario loading, the policy engine and `isoharness plan`.
isoharness_test(scenario_test SOURCES unit/scenario_test.cpp unit/compose_test.cpp LIBS isoharness::scenario)
isoharness_test(policy_test
  SOURCES unit/policy_rules_test.cpp unit/policy_reference_test.cpp unit/policy_network_test.cpp
    unit/plan_stream_test.cpp unit/policy_chart_test.cpp unit/policy_task_test.cpp unit/policy_ways_test.cpp
  LIBS isoharness::policy)
# Runs the built `isoharness plan` binary end to end, over scenarios/ and scenarios/invalid/.
isoharness_test(plan_cli_test SOURCES unit/plan_cli_test.cpp LIBS isoharness::common nlohmann_json::nlohmann_json)
add_dependencies(plan_cli_test isoharness)
