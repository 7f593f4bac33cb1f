# harness/cli: the flags every sandbox command shares, and the command line each records in
# result.json (the built binary, run against a hawk CLI that does not exist and a closed
# loopback port).
isoharness_test(cli_test SOURCES unit/cli_test.cpp unit/node_view_cli_test.cpp LIBS isoharness::cli)
# The binary looks for the isoprobe agent in the build tree, so the bundle is built first.
add_dependencies(cli_test isoharness isoprobe_bundle)
