# Instrumented builds, each in its own build directory (never the default build/):
#   -DISOHARNESS_SANITIZE=ON  AddressSanitizer + UndefinedBehaviorSanitizer (ci/sanitize)
#   -DISOHARNESS_FUZZ=ON      the same plus libFuzzer coverage, and the fuzz targets of
#                             tests/fuzz (ci/fuzz; needs clang)
option(ISOHARNESS_SANITIZE "Build with ASan and UBSan (ci/sanitize)" OFF)
option(ISOHARNESS_FUZZ "Build the libFuzzer targets in tests/fuzz (clang; ci/fuzz)" OFF)

if(ISOHARNESS_FUZZ AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "ISOHARNESS_FUZZ needs clang (libFuzzer): configure with CXX=clang++ CC=clang")
endif()

if(ISOHARNESS_SANITIZE OR ISOHARNESS_FUZZ)
  set(isoharness_sanitizers -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_compile_options(${isoharness_sanitizers})
  add_link_options(-fsanitize=address,undefined)
  # GCC 12 under ASan reports -Wmaybe-uninitialized inside libstdc++'s <regex> and
  # <functional> (the instrumentation hides the initialisation from the warning's
  # analysis); with ISOHARNESS_WERROR that stops the build. ci/sanitize uses clang.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-maybe-uninitialized)
  endif()
endif()
if(ISOHARNESS_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# Fully static helper programs (the isoprobe launcher, the getpid loop) cannot carry the
# sanitizer runtimes: they are built without instrumentation in every configuration.
function(isoharness_uninstrumented target)
  if(ISOHARNESS_SANITIZE OR ISOHARNESS_FUZZ)
    get_target_property(opts ${target} COMPILE_OPTIONS)
    list(FILTER opts EXCLUDE REGEX "^-f(no-)?sanitize")
    set_property(TARGET ${target} PROPERTY COMPILE_OPTIONS ${opts})
    get_target_property(link ${target} LINK_OPTIONS)
    list(FILTER link EXCLUDE REGEX "^-fsanitize")
    set_property(TARGET ${target} PROPERTY LINK_OPTIONS ${link})
  endif()
endfunction()
