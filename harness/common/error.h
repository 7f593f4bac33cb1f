// Error kinds shared by every module.
//
// Bad user input (config, scenario, usage) ends in one exception type, UserError, caught
// in main and mapped to exit code 2. A control or component that cannot be applied or
// reached throws InfraError (exit 3). Recoverable failures inside a module return
// Expected<T> instead of throwing. Bugs hit ISOHARNESS_CHECK, which aborts.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace isoharness {

// Exit codes, the contract with CI and every caller.
inline constexpr int kExitPass = 0;
inline constexpr int kExitVerdictFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInfrastructure = 3;

// One problem in the user's input, located as precisely as the input allows.
struct Diagnostic {
  std::string file;     // path as the user named it; may be empty for flags
  int line = 0;         // 1-based; 0 when unknown
  int column = 0;       // 1-based; 0 when unknown
  std::string item;     // which item/key it concerns, human-readable; may be empty
  std::string message;  // what is wrong and what to do instead

  // "file:line:col: item: message" with empty parts left out.
  std::string to_string() const;
};

// Bad input: the message lists every diagnostic of the phase that failed.
class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message);
  explicit UserError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

// A control, component or remote step that could not be applied or reached.
class InfraError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An infrastructure failure that no later sandbox of the run can escape: the jumphost
// unreachable (the harness's own path), a platform CLI waiting for a person to log in.
// A run meeting one starts no more sandboxes and lists each one it did not run. Every
// other InfraError belongs to the one sandbox it happened to; the others go on.
class RunStoppingError : public InfraError {
 public:
  using InfraError::InfraError;
};

}  // namespace isoharness

// Aborting check for programming errors (never for user input).
#define ISOHARNESS_CHECK(cond)                                                                            \
  do {                                                                                                    \
    if (!(cond)) {                                                                                        \
      std::fprintf(stderr, "isoharness: internal check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                                       \
    }                                                                                                     \
  } while (0)
