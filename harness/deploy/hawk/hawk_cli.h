// The hawk CLI, one call per method, each through run_command: argv only, a deadline,
// bounded output, and the node class's environment. What the CLI prints is parsed here
// and nowhere else (`Eval set ID:` line, `Error:` messages, the config-keys warning).
// Every call's stdout and stderr are watched as they arrive: a CLI that starts its
// interactive login (no valid token) is stopped at once, and the call fails with kNeedsLogin
// (platform_text.h says how a prompt is told).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "harness/common/expected.h"
#include "harness/common/subprocess.h"
#include "harness/deploy/hawk/status_json.h"

namespace isoharness::deploy::hawk {

using Env = std::vector<std::pair<std::string, std::string>>;

// Error::code of a call stopped because the CLI waits for a person to log in.
inline constexpr int kNeedsLogin = -2;
// Lines of `hawk logs` asked for when a sandbox fails (the CLI's -n).
inline constexpr int kLogLines = 100;

// What `hawk human eval start` printed on success.
struct Started {
  std::string eval_set_id;
  bool unknown_config_keys = false;  // stderr warned "Unknown configuration keys found"
  std::string warning;               // that warning's line(s), cleaned and bounded
};

// What the login pre-flight learnt (HawkCli::check_login).
enum class LoginCheck {
  has_token,        // the CLI answered with a token (not kept)
  no_such_command,  // the CLI has no `auth access-token`; its first real call tells instead
};

// The pre-flight's words: `hawk auth access-token`, which prints the stored access token
// (refreshing it when it can) and fails rather than starting a device login.
inline const std::vector<std::string> kTokenCommand = {"auth", "access-token"};

// Text only: whether a failed call's stderr is click's answer to a command it does not have.
bool is_unknown_command(std::string_view err);

// Text only: whether a failed `hawk status` said the platform has no job for the id yet
// (its API answers 404 "Job not found" until the eval's first pod exists).
bool is_job_not_found(std::string_view message);

// Text only: the id from an `Eval set ID: <id>` line of stdout.
Expected<std::string> parse_eval_set_id(std::string_view out);

// Text only: the CLI's `Error: …` line from stderr (else its first non-empty line), cleaned
// of control characters and at most 500 characters.
std::string cli_error_message(std::string_view err);

class HawkCli {
 public:
  using Runner = std::function<Expected<RunResult>(const std::vector<std::string>&, const RunOptions&)>;
  HawkCli(std::string program, Env env, Runner runner);

  // `hawk human eval start CONFIG --human NAME --skip-confirm [EXTRA...]`, EXTRA being the
  // profile's hawk.start_args (checked when the profile was read). An error holds the CLI's
  // message; code is its exit status (-1 when it could not run or timed out, kNeedsLogin).
  Expected<Started> start(const std::string& config_path, const std::string& human,
                          const std::vector<std::string>& extra = {}) const;
  // kTokenCommand, before the first start: a token (discarded unread), or the CLI saying
  // it has no such command. Any other answer is an error with code kNeedsLogin (a prompt,
  // or no usable token), or -1 when the CLI could not be run or gave no answer in time.
  Expected<LoginCheck> check_login() const;
  // `hawk human eval ssh-command ID --timeout T`: stdout on exit 0.
  Expected<std::string> ssh_command(const std::string& id, int timeout_s) const;
  // `hawk status ID --hours 0`, parsed: pod status only, so the least log history.
  Expected<EvalStatus> status(const std::string& id) const;
  // `hawk logs ID -n kLogLines`: what it printed (stdout, else its stderr message), raw.
  Expected<std::string> logs(const std::string& id) const;
  // `hawk delete ID`.
  Status remove(const std::string& id) const;

  const std::string& program() const { return program_; }

 private:
  Expected<RunResult> call(std::vector<std::string> args, std::chrono::seconds deadline) const;
  Error failure(const std::string& what, const Expected<RunResult>& r) const;

  std::string program_;
  Env env_;
  Runner runner_;
};

}  // namespace isoharness::deploy::hawk
