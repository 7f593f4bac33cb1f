// The agent upload over a far jumphost link, plain against packed, in one run.
//
// One local world whose jumphost link has a round trip (jumphost_link.rtt_ms, default 40:
// the world's delay relay), one runc sandbox; one jumphost connection, one sandbox session.
// Interleaved, `--runs` times each: the posture agent's directory as `run` uploads it
// (isoprobe + isoprobe-unxz: the agent goes xz-compressed), and the same agent alone
// (sent as is). Both checked by size, as `run` does. Prints each form's median and min in
// ms, the bytes that crossed, and the packed/plain ratio of the medians.
//   sudo build/bench/upload_far_bench [--runs 5] [--rtt-ms 40]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/common/error.h"
#include "harness/common/median.h"
#include "harness/common/ssh_keygen.h"
#include "harness/deploy/local/local_backend.h"
#include "harness/deploy/local/sandbox_spec.h"
#include "harness/transport/transport.h"

namespace dl = isoharness::deploy::local;
namespace tr = isoharness::transport;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

struct Form {
  const char* name;
  std::string dir;
  std::vector<double> ms;
  std::size_t sent = 0;  // bytes that crossed the link
};

json runc_values() {
  json svc = {{"image", "example.com/bench:v1"}, {"runtimeClassName", "CLUSTER_DEFAULT"}};
  return json{{"services", {{"default", svc}}}};
}

// Uploads the form's directory once to a fresh remote place; returns ms, records bytes.
double upload_once(tr::SandboxSession& s, Form& form, int i) {
  const auto t = Clock::now();
  auto up = s.upload_dir(form.dir, std::string(".bench-") + form.name + std::to_string(i), 120s,
                         tr::UploadCheck::size);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  if (!up) throw isoharness::InfraError(std::string(form.name) + " upload: " + up.error().message);
  form.sent = 0;
  for (const auto& f : *up)
    form.sent += (f.compressed_bytes ? f.compressed_bytes + f.unpacker_bytes : f.bytes);
  return ms;
}

void print(const Form& f) {
  std::printf("%-7s median %8.1f ms  min %8.1f ms  bytes sent %zu\n", f.name, isoharness::median(f.ms),
              *std::min_element(f.ms.begin(), f.ms.end()), f.sent);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5, rtt = 40;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::clamp(std::atoi(argv[i + 1]), 1, 50);
    if (std::strcmp(argv[i], "--rtt-ms") == 0) rtt = std::clamp(std::atoi(argv[i + 1]), 0, 2000);
  }
  try {
    char tmpl[] = "/tmp/ih-uploadbench-XXXXXX";
    const std::string dir = ::mkdtemp(tmpl);
    const std::string agent_dir = std::string(ISOHARNESS_BINARY_DIR) + "/probes/isoprobe-posture";
    fs::create_directories(dir + "/plain");
    fs::copy_file(agent_dir + "/isoprobe", dir + "/plain/isoprobe");
    auto key = isoharness::generate_ed25519_key(dir + "/id_ed25519", "isoharness-bench");
    if (!key) throw isoharness::InfraError("bench key: " + key.error().message);
    json profile = dl::default_local_profile();
    profile["jumphost_link"] = {{"rtt_ms", rtt}};
    dl::LocalOptions opts;
    opts.run_id = "b" + dl::new_run_id().substr(0, 7);
    auto backend = dl::make_local_backend(profile, opts);
    isoharness::deploy::SandboxRequest req;
    req.run_id = backend->run_id();
    req.name = "upload";
    req.values = runc_values();
    req.node_class = "tier";
    req.authorized_key = *key;
    const auto h = backend->deploy(req);
    tr::Credentials creds;
    creds.private_key_path = dir + "/id_ed25519";
    auto jump = tr::JumpConnection::connect(h.route.jump, creds, {}, 30s);
    if (!jump) throw isoharness::InfraError("jump: " + jump.error().message);
    auto s = (*jump)->open(h.route.sandbox, 30s);
    if (!s) throw isoharness::InfraError("sandbox: " + s.error().message);
    Form plain{"plain", dir + "/plain", {}}, packed{"packed", agent_dir, {}};
    for (int i = 0; i < runs; ++i)
      for (Form* f : {&plain, &packed}) f->ms.push_back(upload_once(**s, *f, i));
    std::printf("agent upload over a %d ms round trip (jumphost %s:%d), %d runs each\n", rtt,
                h.route.jump.host.c_str(), h.route.jump.port, runs);
    print(plain);
    print(packed);
    std::printf("packed/plain: time %.2f, bytes %.2f\n",
                isoharness::median(packed.ms) / isoharness::median(plain.ms),
                static_cast<double>(packed.sent) / static_cast<double>(plain.sent));
    s->reset();
    jump->reset();
    backend->destroy(h);
    backend.reset();
    fs::remove_all(dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "upload_far_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
