// `isoharness selftest`: weaken sandboxes behind the plan's back and show that verify
// catches every weakening, and that clean sandboxes raise no false alarm.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/common/error.h"
#include "harness/selftest/catalogue.h"
#include "harness/selftest/selftest.h"

namespace isoharness::cli {
namespace {

// TEST SEAM, honoured by selftest only: ISOHARNESS_TEST_DISABLE_CHECK=control[,prefix*]
// judges the run as if verify lacked those checks, to show selftest exits 1 when the
// verifier loses one. Announced on stderr and recorded in the result.
std::vector<std::string> disabled_checks_from_env() {
  const char* env = std::getenv("ISOHARNESS_TEST_DISABLE_CHECK");
  if (!env || !*env) return {};
  auto names = split_list(env);
  for (const auto& n : names)
    std::fprintf(stderr, "isoharness selftest: TEST SEAM: judging as if verify had no check '%s'\n",
                 n.c_str());
  return names;
}

int list_catalogue() {
  for (const auto& w : selftest::catalogue()) {
    const std::string caught = fmt::format("{}", fmt::join(w.caught_by, ", "));
    std::printf("%-30s %s%s\n    caught by: %s\n", w.name.c_str(), w.what.c_str(), w.quick ? " [quick]" : "",
                caught.c_str());
    for (const char* runtime : {"runc", "gvisor"}) {
      std::string why = w.not_applicable ? w.not_applicable(runtime) : "";
      if (!why.empty()) std::printf("    not under %s: %s\n", runtime, why.c_str());
    }
  }
  return kExitPass;
}

}  // namespace

Command selftest_command(CLI::App& app, const CommandLine& line) {
  auto cfg = std::make_shared<selftest::SelftestConfig>();
  auto list = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand(
      "selftest",
      "Mutation testing of isolation: deploy the selftest items clean and once per named weakening (a kept "
      "capability, an opened egress rule, a shared host namespace, ...), verify each against the unweakened "
      "plan, "
      "and write the detection matrix (selftest.md, selftest.html, junit.xml, result.json). Exit 0 every "
      "applicable weakening caught and no false alarm, 1 one got through or a clean sandbox failed, 2 bad "
      "input, "
      "3 infrastructure failure.");
  add_sandbox_options(sub, cfg->command, line);
  sub->add_option("--runtimes", cfg->runtimes, "Comma-separated runtimes (runc,gvisor)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->capture_default_str()
      ->check(CLI::IsMember({"runc", "gvisor"}));
  sub->add_option("--only", cfg->only, "Comma-separated weakening names (see --list)")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_flag("--quick", cfg->quick, "A fast subset for nightly CI (one weakening per layer)");
  sub->add_option("--agent", cfg->agent,
                  "honest (the real probe) or lying (reports a clean sandbox's posture, keeping the real "
                  "egress results: every posture weakening must still be caught, by the node's view)")
      ->check(CLI::IsMember({"honest", "lying"}))
      ->capture_default_str();
  sub->add_flag("--list", *list, "Print the catalogue and exit");
  sub->add_option("--parallel", cfg->parallel, "Sandboxes at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 32));

  return {sub, [cfg, list]() -> int {
            if (*list) return list_catalogue();
            if (cfg->quick && !cfg->only.empty())
              throw UserError("--quick and --only choose the weakenings twice; use one");
            cfg->disabled_checks = disabled_checks_from_env();
            cfg->color = ::isatty(2) && std::getenv("NO_COLOR") == nullptr;
            auto outcome = selftest::run_selftest(*cfg);
            for (const auto& r : outcome.reports) std::fprintf(stderr, "wrote %s\n", r.c_str());
            return outcome.exit_code;
          }};
}

}  // namespace isoharness::cli
