// `isoharness report JOURNAL --out DIR`: result.json and the reports of a run that did not
// finish (killed, out of disk, the machine rebooted), from the journal it kept.
#include <cstdio>
#include <memory>
#include <string>

#include "harness/cli/commands.h"
#include "harness/runner/session.h"

namespace isoharness::cli {

Command report_command(CLI::App& app) {
  struct Options {
    std::string journal;
    std::string out_dir;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "report",
      "Write result.json, report.md, report.html and junit.xml for a run that did not finish, from its "
      "journal "
      "(journal.jsonl "
      "in its --out, or the copy kept under " +
          std::string(runner::kKeptJournalDir) +
          " when --out could not be written). The checks it holds are reported as they were; the verdict is "
          "error, since the journal cannot say what the run never reached. Exit 3 when written (the "
          "verdict's "
          "code), 2 for a file that is no journal.");
  sub->add_option("journal", o->journal, "The run's journal (JSON lines)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--out", o->out_dir, "Directory for result.json and the reports")->required();
  return {sub, [o]() -> int {
            auto outcome = runner::report_from_journal(o->journal, o->out_dir);
            for (const auto& r : outcome.reports) std::fprintf(stderr, "wrote %s\n", r.c_str());
            return outcome.exit_code;
          }};
}

}  // namespace isoharness::cli
