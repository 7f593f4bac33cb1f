#include "harness/common/ssh_keygen.h"

#include <fstream>

#include "harness/common/subprocess.h"

namespace isoharness {

Expected<std::string> generate_ed25519_key(const std::string& private_path, const std::string& comment,
                                           std::chrono::milliseconds deadline) {
  auto r = run_command({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", private_path},
                       RunOptions{.deadline = deadline, .max_output = std::size_t{64} << 10});
  if (!r) return make_error("ssh-keygen: " + r.error().message + " (install openssh-client: run ci/setup)");
  if (!r->ok()) return make_error("ssh-keygen failed for " + private_path + ": " + r->describe());
  std::ifstream in(private_path + ".pub");
  std::string line;
  if (!std::getline(in, line) || line.empty())
    return make_error("ssh-keygen wrote no public key at " + private_path + ".pub");
  return line;
}

}  // namespace isoharness
