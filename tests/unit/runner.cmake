# harness/runner pieces that need no sandbox: reading `isoprobe bench` and posture output,
# the worker pool, refusal jobs (which scenarios, the fail_loudly verdict), the journal
# when --out fills up, and run_job with its verdict on a fake backend and transport
# (runner_fakes.h).
isoharness_test(runner_test SOURCES unit/runner_bench_output_test.cpp unit/runner_fanout_test.cpp
  unit/runner_probe_output_test.cpp unit/runner_refusal_test.cpp
  unit/runner_journal_test.cpp unit/runner_freshness_test.cpp unit/runner_stop_test.cpp
  unit/runner_node_view_test.cpp unit/runner_job_test.cpp unit/runner_peer_board_test.cpp LIBS isoharness::runner)
