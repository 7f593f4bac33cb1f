# harness/runner pieces that need no sandbox: reading `isoprobe bench` output.
isoharness_test(runner_test SOURCES unit/runner_bench_output_test.cpp unit/runner_probe_output_test.cpp LIBS isoharness::runner)
