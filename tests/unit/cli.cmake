# harness/cli: the flags every sandbox command shares, and the command line each records in
# result.json (the built binary, run against a hawk CLI that does not exist and a closed
# loopback port).
isoharness_test(cli_test SOURCES unit/cli_test.cpp LIBS isoharness::cli)
add_dependencies(cli_test isoharness)
