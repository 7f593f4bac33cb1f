# Installing isoharness (`cmake --install build --prefix DIR`) and packaging it as a Debian
# package (`ci/package`, CPack's DEB generator). Included at the end of the top-level
# CMakeLists.txt, once every target exists.
#
#   <prefix>/bin/isoharness
#   <prefix>/lib/isoharness/       isoprobe-bundle/, isoprobe-posture/, getpid-static, isoharness-world-helper
#   <prefix>/share/isoharness/     scenarios/ (with deployments/, parity/, invalid/), runtime-escapes/
#   <prefix>/share/doc/isoharness/ README.md, CODING.md, CONTRACTS.md, examples/workflows/,
#                                  examples/baselines.example.csv
#
# harness/common/install_paths.cc looks for the same directories (the definitions below),
# relative to the running binary's prefix; nothing is written there at run time.
include_guard(GLOBAL)

set(ISOHARNESS_INSTALL_DATADIR share/isoharness)
set(ISOHARNESS_INSTALL_LIBDIR lib/isoharness)
set(ISOHARNESS_INSTALL_DOCDIR share/doc/isoharness)

# The lookup's copy of these directories, and the build tree it may fall back to (only
# while the running binary lives in it). On this one file, so no other file recompiles
# when a build tree moves.
set_property(SOURCE ${CMAKE_SOURCE_DIR}/harness/common/install_paths.cc
  DIRECTORY ${CMAKE_SOURCE_DIR}/harness/common
  APPEND PROPERTY COMPILE_DEFINITIONS
    ISOHARNESS_INSTALL_DATADIR="${ISOHARNESS_INSTALL_DATADIR}"
    ISOHARNESS_INSTALL_LIBDIR="${ISOHARNESS_INSTALL_LIBDIR}"
    ISOHARNESS_BUILD_TREE="${CMAKE_BINARY_DIR}"
    ISOHARNESS_SOURCE_TREE="${CMAKE_SOURCE_DIR}")

install(TARGETS isoharness RUNTIME DESTINATION bin)
install(TARGETS isoharness-world-helper getpid_static RUNTIME DESTINATION ${ISOHARNESS_INSTALL_LIBDIR})
# The bundle is a directory the build assembles (probes/bundle/collect_bundle.cmake): the
# static launcher, the loader, isoprobe.bin and its libraries, uploaded as is.
install(DIRECTORY ${CMAKE_BINARY_DIR}/probes/isoprobe-bundle/
  DESTINATION ${ISOHARNESS_INSTALL_LIBDIR}/isoprobe-bundle USE_SOURCE_PERMISSIONS)
# The posture-only agent (one static file) that `run` uploads instead of the whole bundle.
install(PROGRAMS ${CMAKE_BINARY_DIR}/probes/isoprobe-posture/isoprobe
  ${CMAKE_BINARY_DIR}/probes/isoprobe-posture/isoprobe-unxz
  DESTINATION ${ISOHARNESS_INSTALL_LIBDIR}/isoprobe-posture)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/scenarios/ DESTINATION ${ISOHARNESS_INSTALL_DATADIR}/scenarios)
# The escape tables the runtime_version check judges by, one per component
# (data/runtime-escapes/<component>.txt).
install(DIRECTORY ${CMAKE_SOURCE_DIR}/data/runtime-escapes/ DESTINATION ${ISOHARNESS_INSTALL_DATADIR}/runtime-escapes)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/docs/CODING.md ${CMAKE_SOURCE_DIR}/docs/CONTRACTS.md
  DESTINATION ${ISOHARNESS_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/ci/workflows/ DESTINATION ${ISOHARNESS_INSTALL_DOCDIR}/examples/workflows)
install(FILES ${CMAKE_SOURCE_DIR}/docs/baselines.example.csv DESTINATION ${ISOHARNESS_INSTALL_DOCDIR}/examples)

# --- The Debian package -------------------------------------------------------------
# Depends: the programs the local backend runs (see `isoharness local doctor`), the
# containers' seccomp profile it converts, and the shared libraries of the two host
# programs, which cmake/isoharness_cpack_project.cmake asks dpkg-shlibdeps for at packaging
# time. The isoprobe bundle carries its own libraries and adds none. gVisor is
# recommended: without runsc only the runc half of a matrix can run.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME isoharness)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "isoharness maintainers <dev@isoharness.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "proves eval sandboxes get the isolation their config asks for")
set(CPACK_PACKAGE_DESCRIPTION
  "isoharness resolves an eval-set config as the platform would, deploys real runc and gVisor sandboxes, \
reaches each over SSH through a jumphost, compares what the isoprobe agent observes with what the config \
promised, and measures what the isolation costs in time.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/package)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(ISOHARNESS_PACKAGE_TOOL_DEPENDS
  "runc, openssh-server, openssh-client, dnsmasq-base, nftables, iproute2, util-linux, procps, \
golang-github-containers-common")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS runsc)
# Read by isoharness_cpack_project.cmake when cpack runs.
set(CPACK_ISOHARNESS_TOOL_DEPENDS "${ISOHARNESS_PACKAGE_TOOL_DEPENDS}")
set(CPACK_ISOHARNESS_HOST_PROGRAMS_FILE ${CMAKE_BINARY_DIR}/package-host-programs.txt)
file(GENERATE OUTPUT ${CPACK_ISOHARNESS_HOST_PROGRAMS_FILE}
  CONTENT "$<TARGET_FILE:isoharness>\n$<TARGET_FILE:isoharness-world-helper>\n")
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_SOURCE_DIR}/cmake/isoharness_cpack_project.cmake)
include(CPack)
