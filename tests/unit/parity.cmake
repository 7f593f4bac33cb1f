# harness/parity statistics, checked against SciPy reference values kept as a fixture
# (tests/fixtures/parity/reference.json, made by tools/parity_reference.py).
isoharness_test(parity_test SOURCES unit/parity_test.cpp LIBS isoharness::parity)
# Night-to-night random effects and sequential alpha spending, by simulation (a few seconds).
isoharness_test(parity_nights_test SOURCES unit/parity_nights_test.cpp LIBS isoharness::parity)
# Where parity timings come from: the section's provenance and a hawk run's context.
isoharness_test(parity_provenance_test SOURCES unit/parity_provenance_test.cpp unit/reports_fixture.cpp
  LIBS isoharness::runner isoharness::history isoharness::reports)
