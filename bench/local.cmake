# Local backend: time from deploy to SSH-ready under runc and runsc, side by side.
#   sudo build/bench/local_deploy_bench [--runs 5]
add_executable(local_deploy_bench ${CMAKE_CURRENT_LIST_DIR}/local_deploy_bench.cc)
target_link_libraries(local_deploy_bench PRIVATE isoharness::deploy_local)
add_dependencies(local_deploy_bench isoharness-world-helper)
# Local backend: the cost of reading the node's view of a sandbox, runc and runsc, beside the
# view off.
#   sudo build/bench/node_view_bench [--runs 20]
add_executable(node_view_bench ${CMAKE_CURRENT_LIST_DIR}/node_view_bench.cc)
target_link_libraries(node_view_bench PRIVATE isoharness::deploy_local)
add_dependencies(node_view_bench isoharness-world-helper)
