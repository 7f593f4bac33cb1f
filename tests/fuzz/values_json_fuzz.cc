// Rendered sandbox values (docs/CONTRACTS.md §1) as the local backend reads them, and the
// OCI config it writes from them.
#include "harness/common/error.h"
#include "harness/deploy/local/oci_spec.h"
#include "harness/deploy/local/sandbox_spec.h"
#include "tests/fuzz/fuzz_support.h"

using namespace isoharness;
using namespace isoharness::deploy::local;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto values = nlohmann::json::parse(fuzz::as_text(data, size), nullptr, false);
  if (values.is_discarded()) return 0;
  static const LocalProfile profile = parse_local_profile(default_local_profile());
  try {
    SandboxSpec spec = parse_sandbox_values(values, "fuzz.json");
    BundleInputs in;
    in.runtime = runtime_for(spec, profile);
    in.hostname = "s1";
    in.netns_path = "/var/run/netns/ih-fuzz";
    in.cgroups_path = "/ih-fuzz-s1";
    in.args = {"/usr/sbin/sshd", "-D"};
    (void)make_oci_config(spec, in).dump();
  } catch (const UserError&) {
  } catch (const InfraError&) {
  }
  return 0;
}
