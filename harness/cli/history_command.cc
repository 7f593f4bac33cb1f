// `isoharness history record|list|drift`: keep results in SQLite and find drift.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "harness/cli/commands.h"
#include "harness/common/error.h"
#include "harness/history/history.h"

namespace isoharness::cli {

Command history_command(CLI::App& app) {
  struct Options {
    std::string db = history::default_path();
    std::vector<std::string> files;
    int window = 7;
    double tolerance = 1.10;
    std::string run;
    bool json = false;
    int limit = 20;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("history", "Keep results in SQLite and find timing and posture drift across nights");
  sub->add_option("--db", o->db, "History database")->capture_default_str();
  sub->require_subcommand(1);
  CLI::App* record = sub->add_subcommand("record", "Store result documents (result.json of run or parity)");
  record->add_option("files", o->files, "result.json files")->required();
  CLI::App* list = sub->add_subcommand("list", "List recorded runs, newest first");
  list->add_option("--limit", o->limit, "How many")->capture_default_str()->check(CLI::Range(1, 10000));
  CLI::App* drift = sub->add_subcommand(
      "drift", "Compare the newest run (or --run) with earlier runs of its kind; exit 1 when anything drifted");
  drift->add_option("--window", o->window, "Earlier runs to pool")->capture_default_str()->check(CLI::Range(1, 365));
  drift->add_option("--tolerance", o->tolerance, "Slowdown ratio that counts as drift")->capture_default_str()
      ->check(CLI::Range(1.0001, 100.0));
  drift->add_option("--run", o->run, "Run id to judge (default: the newest)");
  drift->add_flag("--json", o->json, "Print the drift document as JSON");

  return {sub, [o, record, list, drift]() -> int {
            history::Database db(o->db);
            if (record->parsed()) {
              for (const auto& f : o->files) {
                std::ifstream in(f);
                if (!in) throw UserError(f + ": cannot read");
                std::stringstream ss;
                ss << in.rdbuf();
                auto doc = nlohmann::json::parse(ss.str(), nullptr, false);
                if (doc.is_discarded()) throw UserError(f + ": not JSON");
                std::printf("recorded %s from %s\n", db.record(doc).c_str(), f.c_str());
              }
              return kExitPass;
            }
            if (list->parsed()) {
              for (const auto& r : db.runs(o->limit))
                std::printf("%-8s %-22s %-8s %-6s %-14s %s\n", r.id.c_str(), r.started.c_str(), r.kind.c_str(),
                            r.verdict.c_str(), r.git_revision.c_str(), r.host.c_str());
              return kExitPass;
            }
            auto doc = db.drift(o->window, o->tolerance, o->run.empty() ? std::nullopt : std::optional(o->run));
            if (o->json) std::printf("%s\n", doc.dump(2).c_str());
            else std::printf("%s", history::drift_to_text(doc).c_str());
            bool drifted = !doc["posture"].empty();
            for (const auto& t : doc["timings"]) drifted = drifted || t.value("drift", false);
            return drifted ? kExitVerdictFailed : kExitPass;
          }};
}

}  // namespace isoharness::cli
