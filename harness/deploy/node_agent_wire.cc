// The node agent's authenticated answer (node_agent_wire.h) on top of the witness wire.
#include "harness/deploy/node_agent_wire.h"

#include <algorithm>

#include "harness/deploy/witness_wire.h"

namespace isoharness::deploy {

bool node_agent_nonce(std::string_view nonce) {
  return nonce.size() == 32 && std::all_of(nonce.begin(), nonce.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string frame_node_view_answer(std::string_view key, std::string_view nonce, std::string_view document) {
  std::string line(document);
  std::replace(line.begin(), line.end(), '\n', ' ');  // one line, whatever the writer did
  line += '\n';
  return frame_witness_log(key, nonce, line, 0, static_cast<long long>(line.size()),
                           kMaxNodeViewBytes + 4096);
}

NodeViewRead read_node_view_answer(std::string_view body, std::string_view key, std::string_view nonce) {
  NodeViewRead out;
  if (!node_agent_nonce(nonce)) {
    out.error = "the request's nonce is not 32 hex digits";
    return out;
  }
  const WitnessFrames frames = read_witness_frames(body, key, 0, "");
  if (!frames.problem.empty())
    out.error = "the node agent's answer cannot be trusted: " + frames.problem;
  else if (frames.log_id != nonce)
    out.error = "the node agent's answer is for another request (nonce " + frames.log_id + ", asked " +
                std::string(nonce) + ")";
  else if (frames.rejected > 0)
    out.error = "the node agent's answer has " + std::to_string(frames.rejected) +
                " line(s) whose MAC or offset is wrong";
  else if (frames.lines.empty() || frames.next_offset != frames.log_size)
    out.error = "the node agent's answer holds no whole document";
  if (!out.error.empty()) return out;
  std::string_view doc = frames.lines;
  if (!doc.empty() && doc.back() == '\n') doc.remove_suffix(1);
  if (doc.find('\n') != std::string_view::npos) {
    out.error = "the node agent's answer holds more than one line";
    return out;
  }
  return read_node_view(doc);
}

}  // namespace isoharness::deploy
