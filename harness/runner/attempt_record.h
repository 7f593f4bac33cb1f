// One attempt of a job, as its phases found it: each phase of run_job (sandbox_job.cc)
// fills its own typed part, and attempt_json turns the whole into the sandbox record the
// journal and result.json keep (docs/CONTRACTS.md §4). A phase that did not run leaves its
// part empty; the record then says what the ones before it found.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/deploy/backend.h"
#include "harness/transport/transport.h"
#include "harness/verify/verify.h"

namespace isoharness::runner {

struct Job;

// upload: what reached the sandbox of isoprobe.
struct UploadRecord {
  std::size_t bytes = 0;
  transport::UploadVia via = transport::UploadVia::sftp;
  transport::UploadedFile file;  // the agent as it went: packed or not, its sizes on the wire
};

// What the harness saw inside one `none` sibling (sibling_probe.h).
struct NoneSiblingSeen {
  std::vector<std::string> exec;  // the runtime exec argv it ran isoprobe with
  bool answered = false;          // isoprobe answered with a posture document
  nlohmann::json egress;          // the egress observation of that document; null when none
};

// check_siblings: the sibling checks (from the agent's posture, then from inside each
// `none` sibling) and what each `none` sibling's probe saw.
struct SiblingRecord {
  std::vector<verify::CheckResult> checks;
  // By service; none: the harness had no way in (the backend gave no exec for it).
  std::map<std::string, std::optional<NoneSiblingSeen>> none_siblings;
};

// probe: the posture document and every check that rests on it, in the order the record
// lists them.
struct PostureRecord {
  std::optional<nlohmann::json> posture;          // none: the sandbox's answer was no posture document
  std::optional<verify::CheckResult> unreadable;  // why not (read_posture refused it)
  std::optional<deploy::WitnessView> witness;     // the backend's witness, when it has one
  std::optional<deploy::NodeView> node_view;      // the node's view, read after the probe ran
  std::vector<verify::CheckResult> claims;        // verify_sandbox, then runtime_version
  SiblingRecord siblings;
  std::optional<verify::CheckResult> agent;  // agent_upload
};

struct AttemptRecord {
  // Who: the job's scenario, item, runtime and node class, this attempt and its name.
  const Job* job = nullptr;
  int attempt = 1;
  std::string name;
  bool tampered = false;

  nlohmann::json facts = nlohmann::json::object();  // the backend's (none: not deployed)
  nlohmann::json timings = nlohmann::json::object();
  std::vector<verify::CheckResult> freshness;  // judge_freshness
  std::optional<UploadRecord> upload;
  PostureRecord probe;
  std::optional<verify::CheckResult> markers;  // leave_markers: the sandbox refused them
  // probe_peers (peer_probe.h): the peer checks and what they rest on; none: no peer phase.
  std::vector<verify::CheckResult> peer_checks;
  nlohmann::json peers = nullptr;
  std::optional<std::string> error;  // the attempt's error
  bool stopped_run = false;          // the error stopped the run (RunStoppingError)
};

// The witness summary the record keeps: who, the nonce, and how much it saw.
nlohmann::json witness_summary(const deploy::WitnessView& w);

// The attempt's sandbox record (journal "sandbox" entry, result.json's sandboxes[]).
nlohmann::json attempt_json(const AttemptRecord& record);

}  // namespace isoharness::runner
