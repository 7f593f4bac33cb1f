#include "harness/runner/run_support.h"

#include <unistd.h>

#include <filesystem>
#include <random>

#include "harness/common/error.h"
#include "harness/common/install_paths.h"
#include "harness/common/ssh_keygen.h"

namespace isoharness::runner {

namespace fs = std::filesystem;

std::atomic<bool> g_interrupted{false};

namespace {
void on_signal(int) {
  g_interrupted = true;
}
}  // namespace

SignalGuard::SignalGuard() {
  g_interrupted = false;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

SignalGuard::~SignalGuard() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

std::string random_run_id() {
  std::random_device rd;
  const char* digits = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string id;
  for (int i = 0; i < 6; ++i) id += digits[rd() % 36];
  return id;
}

RunKey::RunKey(const std::string& run_id) {
  char tmpl[] = "/tmp/isoharness-key-XXXXXX";
  if (!::mkdtemp(tmpl)) throw InfraError("cannot create a temporary directory for the run's SSH key");
  dir_ = tmpl;
  private_path_ = dir_ + "/id_ed25519";
  auto line = generate_ed25519_key(private_path_, "isoharness-" + run_id);
  if (!line) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    throw InfraError(line.error().message);
  }
  public_line_ = *line;
}

RunKey::~RunKey() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string find_deployment(const std::string& given, const std::string& scenarios_dir,
                            scenario::BackendKind backend) {
  if (!given.empty()) return given;
  if (scenarios_dir.empty()) throw UserError(resolve_path(kScenariosDir).problem);
  std::string p = scenarios_dir + "/deployments/" + std::string(scenario::backend_name(backend)) + ".yaml";
  if (fs::exists(p)) return p;
  throw UserError("no deployment profile: pass --deployment FILE (looked for " + p + ")");
}

std::string find_isoprobe_bundle(const std::string& given, const std::string& build_dir) {
  const ShippedPath& item = build_dir == kPostureAgentDir ? kPostureAgent : kIsoprobeBundle;
  ResolvedPath bundle = resolve_path(item, given);
  if (!bundle.found()) throw UserError(bundle.problem);
  return bundle.path;
}

}  // namespace isoharness::runner
