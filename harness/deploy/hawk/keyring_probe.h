// Which keyring the hawk CLI would keep its tokens in, for `isoharness local doctor`. The CLI
// stores its access and refresh tokens through Python's `keyring` package (docs/CONTRACTS.md
// §4.1); with no usable backend, as on a headless runner without a Secret Service, every
// call finds no token and starts a device login.
#pragma once

#include <string>
#include <string_view>

#include "harness/deploy/hawk/hawk_cli.h"

namespace isoharness::deploy::hawk {

struct KeyringFinding {
  bool ok = false;      // a backend that can keep the tokens
  std::string backend;  // e.g. "keyring.backends.SecretService.Keyring"; "" when unknown
  std::string source;   // how it was learnt: the variable, or the interpreter asked
  std::string detail;   // what was found, or why nothing was
};

// Text only: the interpreter a script's first line names ("#!/usr/bin/python3",
// "#!/usr/bin/env python3"), "" when it names none.
std::string script_interpreter(std::string_view first_line);

// Text only: what the interpreter printed (the backend's module.class on the first line,
// then the backends a chainer holds, one per line) judged: the `fail` and `null` backends,
// and a chainer holding nothing, keep no token.
KeyringFinding judge_keyring(std::string_view printed, std::string source);

// PYTHON_KEYRING_BACKEND when set (keyring's own override); else the CLI's interpreter
// (the first line of the `cli` program, found in PATH), asked for its keyring with a fixed
// script, argv only, within 15 s and 64 KiB of output.
KeyringFinding hawk_keyring(const std::string& cli, const HawkCli::Runner& runner);

}  // namespace isoharness::deploy::hawk
