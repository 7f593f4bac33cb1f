#include "harness/deploy/hawk/hawk_cli.h"

#include <fmt/format.h>

#include <regex>

#include "harness/common/text.h"
#include "harness/deploy/hawk/platform_text.h"

namespace isoharness::deploy::hawk {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kMaxMessage = 500;

std::string clean_line(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (out.size() >= kMaxMessage) break;
    unsigned char u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

}  // namespace

Expected<std::string> parse_eval_set_id(std::string_view out) {
  static const std::regex id_re("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
  constexpr std::string_view kPrefix = "Eval set ID:";
  for (std::string_view line : lines_of(out)) {
    line = common::trim(line);
    if (line.substr(0, kPrefix.size()) != kPrefix) continue;
    std::string id(common::trim(line.substr(kPrefix.size())));
    if (!std::regex_match(id, id_re))
      return make_error(fmt::format("hawk printed an eval set id that is not one: '{}'", clean_line(id)));
    return id;
  }
  return make_error("hawk printed no 'Eval set ID: <id>' line");
}

std::string cli_error_message(std::string_view err) {
  std::string_view first;
  for (std::string_view line : lines_of(err)) {
    line = common::trim(line);
    if (line.substr(0, 6) == "Error:") return clean_line(line);
    if (first.empty() && !line.empty()) first = line;
  }
  return first.empty() ? "(no message on stderr)" : clean_line(first);
}

bool is_job_not_found(std::string_view message) {
  return message.find("Job not found") != std::string_view::npos ||
         message.find("404 Not Found") != std::string_view::npos;
}

bool is_unknown_command(std::string_view err) {
  return err.find("No such command") != std::string_view::npos ||
         err.find("no such command") != std::string_view::npos;
}

HawkCli::HawkCli(std::string program, Env env, Runner runner)
    : program_(std::move(program)), env_(std::move(env)), runner_(std::move(runner)) {}

Expected<RunResult> HawkCli::call(std::vector<std::string> args, std::chrono::seconds deadline) const {
  args.insert(args.begin(), program_);
  RunOptions options;
  options.deadline = deadline;
  options.max_output = 4 << 20;
  options.stdin_data = "";  // never answer a prompt
  options.watch = [](const OutputSeen& seen) {
    return login_prompt(seen.text, seen.fresh, seen.is_stderr ? Stream::err : Stream::out);
  };
  for (const auto& [k, v] : env_) options.env_set[k] = v;
  return runner_(args, options);
}

Error HawkCli::failure(const std::string& what, const Expected<RunResult>& r) const {
  if (!r) return make_error(fmt::format("{} {}: cannot run: {}", program_, what, r.error().message), -1);
  if (!r->stopped.empty())
    return make_error(
        fmt::format("{} {} needs a person to log in: {}; the call was stopped. Run `hawk login` on "
                    "this machine, as the user that runs isoharness (with the node class's "
                    "environment, e.g. HAWK_API_URL), then run again",
                    program_, what, r->stopped),
        kNeedsLogin);
  if (r->timed_out)
    return make_error(fmt::format("{} {}: no answer before its deadline", program_, what), -1);
  if (!r->exited)
    return make_error(fmt::format("{} {}: killed by signal {}", program_, what, r->term_signal), -1);
  return make_error(
      fmt::format("{} {} exited {}: {}", program_, what, r->exit_code, cli_error_message(r->err)),
      r->exit_code);
}

Expected<Started> HawkCli::start(const std::string& config_path, const std::string& human,
                                 const std::vector<std::string>& extra) const {
  std::vector<std::string> args = {"human", "eval", "start", config_path, "--human", human, "--skip-confirm"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = call(std::move(args), 300s);
  if (!r || !r->ok()) return failure("human eval start", r);
  auto id = parse_eval_set_id(r->out);
  if (!id) return id.error();
  Started s;
  s.eval_set_id = *id;
  for (std::string_view line : lines_of(r->err)) {
    if (line.find("Unknown configuration keys found") == std::string_view::npos) continue;
    s.unknown_config_keys = true;
    s.warning = clean_line(r->err);
  }
  return s;
}

Expected<LoginCheck> HawkCli::check_login() const {
  auto r = call(kTokenCommand, 60s);
  if (r && r->exited && r->exit_code == 2 && is_unknown_command(r->err)) return LoginCheck::no_such_command;
  if (r && r->ok() && r->out.find_first_not_of(" \r\n\t") != std::string::npos) return LoginCheck::has_token;
  Error e = failure("auth access-token", r);
  if (e.code == kNeedsLogin || e.code == -1) return e;
  return make_error(fmt::format("{} auth access-token found no usable login ({}); run `hawk login` on this "
                                "machine, as the user that runs isoharness (with the node class's "
                                "environment, e.g. HAWK_API_URL), then run again",
                                program_, r && r->ok() ? "it printed no token" : e.message),
                    kNeedsLogin);
}

Expected<std::string> HawkCli::ssh_command(const std::string& id, int timeout_s) const {
  auto r = call({"human", "eval", "ssh-command", id, "--timeout", std::to_string(timeout_s)},
                std::chrono::seconds(timeout_s + 30));
  if (!r || !r->ok()) return failure("human eval ssh-command", r);
  return r->out;
}

Expected<EvalStatus> HawkCli::status(const std::string& id) const {
  auto r = call({"status", id, "--hours", "0"}, 60s);
  if (!r || !r->ok()) return failure("status", r);
  if (r->out_truncated) return make_error(program_ + " status: output larger than 4 MiB");
  return parse_status(r->out);
}

Expected<std::string> HawkCli::logs(const std::string& id) const {
  auto r = call({"logs", id, "-n", std::to_string(kLogLines)}, 60s);
  if (!r || !r->ok()) return failure("logs", r);
  return r->out.empty() ? r->err : r->out;
}

Status HawkCli::remove(const std::string& id) const {
  auto r = call({"delete", id}, 180s);
  if (!r || !r->ok()) return failure("delete", r);
  return Ok{};
}

}  // namespace isoharness::deploy::hawk
