# Local backend: time from deploy to SSH-ready under runc and runsc, side by side.
#   sudo build/bench/local_deploy_bench [--runs 5]
add_executable(local_deploy_bench ${CMAKE_CURRENT_LIST_DIR}/local_deploy_bench.cc)
target_link_libraries(local_deploy_bench PRIVATE isoharness::deploy_local)
add_dependencies(local_deploy_bench isoharness-world-helper)
