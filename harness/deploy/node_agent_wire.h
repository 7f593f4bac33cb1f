// How the node agent (`isoharness node-view`) hands its document to the harness,
// authenticated as the operator witness log is (witness_wire.h, docs/CONTRACTS.md §4.4.1
// and §4.9.1): the answer is a witness-log answer from offset 0 whose log identity is the
// harness's nonce for this request (32 lower-case hex digits) and whose one line is the
// node-view document, every line MACed with the token operator and harness share. A
// forged line, another token, or an answer replayed from another request (another nonce)
// is refused as a whole.
#pragma once

#include <string>
#include <string_view>

#include "harness/deploy/node_view.h"

namespace isoharness::deploy {

// Whether a nonce is one the answer can carry: 32 lower-case hex digits.
bool node_agent_nonce(std::string_view nonce);

// The framed answer for `document` (write_node_view's text, one line).
std::string frame_node_view_answer(std::string_view key, std::string_view nonce, std::string_view document);

// The document read back: its MACs, offsets and nonce checked, then read_node_view. On any
// failure `error` says why and `view` is nullopt.
NodeViewRead read_node_view_answer(std::string_view body, std::string_view key, std::string_view nonce);

}  // namespace isoharness::deploy
