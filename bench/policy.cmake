# Planning speed: parse + plan + to_json of a generated 1,000-item eval set.
add_executable(policy_bench ${CMAKE_CURRENT_LIST_DIR}/policy_bench.cc)
target_link_libraries(policy_bench PRIVATE isoharness::policy benchmark::benchmark)
