# Workloads of `isoprobe bench`: the registry and helpers compiled in, and the built
# isoprobe (the bundle launcher when it exists, else the plain executable) run for real.
file(GLOB workloads_sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/probes/workloads/*.cc)
isoharness_test(workloads_test SOURCES unit/workloads_test.cpp ${workloads_sources}
  LIBS benchmark::benchmark nlohmann_json::nlohmann_json Threads::Threads)
target_include_directories(workloads_test PRIVATE ${CMAKE_SOURCE_DIR}/probes)
add_dependencies(workloads_test isoprobe)
if(TARGET isoprobe_bundle)
  add_dependencies(workloads_test isoprobe_bundle)
endif()
