#include "harness/runner/attempt_freshness.h"

#include <chrono>
#include <optional>
#include <random>

#include "harness/common/error.h"
#include "harness/runner/probe_output.h"

namespace isoharness::runner {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr std::size_t kMaxAnswer = std::size_t{16} * 1024;
constexpr auto kDeadline = 20s;

// The file and the process each attempt leaves; an unusual sleep argument, so that
// nothing else in a sandbox looks like the marker process.
const std::string kMarkerFile = ".isoharness-attempt";
const std::string kMarkerSleep = "3599.25";
const std::string kMarkerPattern = "'^sleep " + kMarkerSleep + "$'";

// $1 the frame boundary, $2 the resolver instance name to ask for (empty: none). Each
// command's output is followed by a frame line (parse_framed).
std::string check_script() {
  return "b=$1 n=$2\n"
         "head -c 200 " +
         kMarkerFile +
         " 2>&1; s=$?; echo; echo \"$b marker $s\"\n"
         "pgrep -a -f " +
         kMarkerPattern +
         " 2>&1; s=$?; echo; echo \"$b pgrep $s\"\n"
         "if [ -n \"$n\" ]; then getent ahostsv4 \"$n\" 2>&1; s=$?; echo; echo \"$b getent $s\"; fi\n";
}

// $1 the frame boundary, $2 the marker file's text. setsid -f detaches the process; its
// stdio is closed so that the session does not wait for it. It may take a moment to
// appear, so the check polls (at most about 2 s).
std::string mark_script() {
  return "b=$1\n"
         "printf '%s' \"$2\" > " +
         kMarkerFile +
         " 2>&1; s=$?; echo; echo \"$b file $s\"\n"
         "setsid -f sh -c 'exec sleep " +
         kMarkerSleep +
         " </dev/null >/dev/null 2>&1' 2>&1; s=$?; echo; "
         "echo \"$b start $s\"\n"
         "i=0 r=0\n"
         "until pgrep -f " +
         kMarkerPattern +
         " >/dev/null 2>&1; do\n"
         "  i=$((i+1)); if [ $i -ge 20 ]; then r=1; break; fi; sleep 0.1\n"
         "done\n"
         "echo \"$b running $r\"\n";
}

std::string random_boundary() {
  std::random_device rd;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string b = "@@isoharness-";
  for (int i = 0; i < 24; ++i) b.push_back(kHex[rd() % 16]);
  return b;
}

// Runs one of the scripts above with its arguments; the parts by name, or InfraError.
std::map<std::string, FramedPart> run_script(SandboxChannel& session, const std::string& script,
                                             const std::vector<std::string>& args, const std::string& what) {
  const std::string boundary = random_boundary();
  std::vector<std::string> argv = {"sh", "-c", script, "isoharness", boundary};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = session.exec(argv, kDeadline, kMaxAnswer);
  if (!r) throw InfraError(what + ": exec in sandbox failed: " + r.error().message);
  if (r->timed_out) throw InfraError(what + ": no answer within " + std::to_string(kDeadline.count()) + " s");
  if (r->out_truncated || r->err_truncated)
    throw InfraError(what + ": the sandbox answered more than " + std::to_string(kMaxAnswer) + " bytes");
  return parse_framed(r->out, boundary);
}

const FramedPart& part(const std::map<std::string, FramedPart>& parts, const std::string& name,
                       const std::string& what) {
  auto it = parts.find(name);
  if (it == parts.end())
    throw InfraError(what + ": the sandbox's answer has no '" + name + "' part (is there a POSIX sh?)");
  return it->second;
}

// Freshness is read by the harness's own commands run in the sandbox: the sandbox answers
// them, so they are its report (no node or witness sees a file or a process inside).
verify::CheckResult by_sandbox(verify::CheckResult c) {
  if (c.status != CheckStatus::na) c.judges = {Judge::sandbox_report};
  return c;
}

verify::CheckResult fresh_file(const FramedPart& marker, int attempt) {
  const bool stale = marker.exit_code == 0;
  return by_sandbox(verify::CheckResult{
      "fresh_sandbox", pass_or_fail(!stale), "no file from an earlier attempt",
      stale ? "found " + kMarkerFile + ": " + sandbox_text(marker.out, 200, true) : "clean home directory",
      stale ? "fresh_sandbox: a file written by an earlier attempt is still present — the sandbox (or its "
              "disk) was reused"
            : (attempt > 1 ? "the marker written by attempt " + std::to_string(attempt - 1) + " is absent"
                           : "first attempt: nothing from earlier runs"),
      ""});
}

verify::CheckResult fresh_process(const FramedPart& pgrep, int attempt) {
  if (pgrep.exit_code != 0 && pgrep.exit_code != 1)
    throw InfraError("pgrep in the sandbox failed (exit " + std::to_string(pgrep.exit_code) +
                     "): " + sandbox_text(pgrep.out, 200));
  const bool stale = pgrep.exit_code == 0;
  return by_sandbox(verify::CheckResult{
      "fresh_process", pass_or_fail(!stale), "no process from an earlier attempt",
      stale ? "running: " + sandbox_text(pgrep.out, 200, true) : "no `sleep " + kMarkerSleep + "` running",
      stale
          ? "fresh_process: a process started by an earlier attempt still runs — the sandbox was reused"
          : (attempt > 1 ? "the process left running by attempt " + std::to_string(attempt - 1) + " is absent"
                         : "first attempt: nothing from earlier runs"),
      "pgrep -a -f " + kMarkerPattern + " -> exit " + std::to_string(pgrep.exit_code)});
}

// fresh_dns when it is not asked: n/a, with what was seen and why; nullopt when it is.
std::optional<verify::CheckResult> dns_not_asked(const deploy::ItemResolverFacts& resolver) {
  auto na = [](const char* observed, const char* reason) {
    return verify::CheckResult{"fresh_dns", CheckStatus::na, "this attempt's own resolver",
                               observed,    reason,          ""};
  };
  if (resolver.instance_name.empty() || resolver.instance.empty())
    return na("the backend names none", "the backend gives no per-attempt resolver instance to ask for");
  if (!resolver.agent_may_ask)
    return na("no resolver reachable", "the agent's service has network_mode none: it may ask no resolver");
  return std::nullopt;
}

verify::CheckResult fresh_dns(const deploy::ItemResolverFacts& resolver, const FramedPart& getent,
                              const std::string& previous_instance, int attempt, std::string* seen) {
  const std::string &name = resolver.instance_name, &own = resolver.instance;
  std::string got = getent.exit_code == 0 ? getent.out.substr(0, getent.out.find_first_of(" \t\n")) : "";
  got = sandbox_text(got, 64);
  *seen = got;
  const bool stale = !previous_instance.empty() && got == previous_instance;
  const bool own_answer = got == own;
  std::string reason = attempt > 1 ? "attempt " + std::to_string(attempt - 1) + "'s answer (" +
                                         previous_instance + ") is gone: this attempt has its own resolver"
                                   : "first attempt: the sandbox's resolver is this attempt's own";
  if (stale)
    reason = "fresh_dns: the sandbox still gets the DNS answer of attempt " + std::to_string(attempt - 1) +
             " — its resolver or cache outlived the attempt";
  else if (!own_answer)
    reason = "fresh_dns: the sandbox's resolver is not this attempt's own (answered " +
             (got.empty() ? std::string("nothing") : got) + ", expected " + own + ")";
  return by_sandbox(verify::CheckResult{
      "fresh_dns", pass_or_fail(!stale && own_answer), name + " -> " + own + " (this attempt's resolver)",
      got.empty() ? "no answer" : got, reason,
      "getent ahostsv4 " + name + " -> exit " + std::to_string(getent.exit_code) + ": " +
          sandbox_text(getent.out, 300, true)});
}

}  // namespace

std::vector<verify::CheckResult> check_freshness(SandboxChannel& session, const deploy::SandboxFacts& facts,
                                                 const std::string& previous_instance, int attempt,
                                                 std::string* seen) {
  const deploy::ItemResolverFacts resolver = facts.item_resolver.value_or(deploy::ItemResolverFacts{});
  const auto skip_dns = dns_not_asked(resolver);
  const std::string what = "checking the sandbox for an earlier attempt's markers";
  auto parts = run_script(session, check_script(), {skip_dns ? "" : resolver.instance_name}, what);
  std::vector<verify::CheckResult> out;
  out.push_back(fresh_file(part(parts, "marker", what), attempt));
  out.push_back(fresh_process(part(parts, "pgrep", what), attempt));
  seen->clear();
  out.push_back(skip_dns
                    ? *skip_dns
                    : fresh_dns(resolver, part(parts, "getent", what), previous_instance, attempt, seen));
  return out;
}

void leave_attempt_markers(SandboxChannel& session, const std::string& marker_text) {
  const std::string what = "leaving the attempt's markers";
  auto parts = run_script(session, mark_script(), {marker_text}, what);
  const auto& file = part(parts, "file", what);
  if (file.exit_code != 0)
    throw InfraError("writing the attempt marker failed: " + sandbox_text(file.out, 200));
  const auto& start = part(parts, "start", what);
  if (start.exit_code != 0)
    throw InfraError("starting the attempt's marker process failed: " + sandbox_text(start.out, 200));
  if (part(parts, "running", what).exit_code != 0)
    throw InfraError("the attempt's marker process is not running after it was started");
}

}  // namespace isoharness::runner
