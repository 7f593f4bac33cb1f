# Every workload of `isoprobe bench` inside real containers: runc and runsc-ptrace.
isoharness_test(workloads_system_test SYSTEM TIMEOUT 600
  SOURCES system/workloads_system_test.cpp system/workloads_container.cc
  LIBS isoharness::common nlohmann_json::nlohmann_json)
add_dependencies(workloads_system_test isoprobe)
if(TARGET isoprobe_bundle)
  add_dependencies(workloads_system_test isoprobe_bundle)
endif()
