# Run by cpack (CPACK_PROJECT_CONFIG_FILE) before it builds the package: completes
# Depends with the shared libraries the host programs really link, as dpkg-shlibdeps
# names them (package and minimum version), next to the programs the backend runs.
# The isoprobe bundle is left out on purpose: it ships its own loader and libraries.
if(NOT CPACK_GENERATOR STREQUAL "DEB")
  return()
endif()
file(STRINGS "${CPACK_ISOHARNESS_HOST_PROGRAMS_FILE}" programs)
if(NOT programs)
  message(FATAL_ERROR "isoharness: no host programs listed in ${CPACK_ISOHARNESS_HOST_PROGRAMS_FILE}")
endif()
# dpkg-shlibdeps wants to run in a source package: give it an empty one.
set(scratch "${CPACK_PACKAGE_DIRECTORY}/shlibdeps")
file(REMOVE_RECURSE "${scratch}")
file(MAKE_DIRECTORY "${scratch}/debian")
file(TOUCH "${scratch}/debian/control")
execute_process(COMMAND dpkg-shlibdeps -O ${programs}
  WORKING_DIRECTORY "${scratch}"
  OUTPUT_VARIABLE shlibdeps ERROR_VARIABLE shlibdeps_err RESULT_VARIABLE rc TIMEOUT 120)
file(REMOVE_RECURSE "${scratch}")
if(NOT rc EQUAL 0 OR NOT shlibdeps MATCHES "shlibs:Depends=([^\n]+)")
  message(FATAL_ERROR "isoharness: dpkg-shlibdeps failed (${rc}): ${shlibdeps_err}")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${CMAKE_MATCH_1}, ${CPACK_ISOHARNESS_TOOL_DEPENDS}")
message(STATUS "isoharness: Depends: ${CPACK_DEBIAN_PACKAGE_DEPENDS}")
