#include "harness/runner/attempt_record.h"

#include "harness/common/error.h"
#include "harness/runner/matrix.h"

namespace isoharness::runner {
namespace {

using nlohmann::json;

void add_checks(json& out, const std::vector<verify::CheckResult>& checks) {
  for (const auto& c : checks) out.push_back(verify::to_json(c));
}

void add_check(json& out, const std::optional<verify::CheckResult>& check) {
  if (check) out.push_back(verify::to_json(*check));
}

json seen_json(const std::optional<NoneSiblingSeen>& seen) {
  if (!seen) return nullptr;
  json out = {{"exec", seen->exec}, {"answered", seen->answered}};
  if (!seen->egress.is_null()) out["egress"] = seen->egress;
  return out;
}

// Every check of the attempt, in the order its phases ran.
json checks_json(const AttemptRecord& r) {
  json checks = json::array();
  add_checks(checks, r.freshness);
  add_check(checks, r.probe.unreadable);
  add_checks(checks, r.probe.claims);
  add_checks(checks, r.probe.siblings.checks);
  add_check(checks, r.probe.agent);
  add_check(checks, r.markers);
  add_checks(checks, r.peer_checks);
  return checks;
}

json facts_json(const AttemptRecord& r) {
  json facts = r.facts;
  if (r.upload) {
    facts["isoprobe_upload_bytes"] = r.upload->bytes;
    facts["isoprobe_upload_via"] = transport::upload_via_name(r.upload->via);
    facts["isoprobe_upload"] = transport::upload_record(r.upload->file);
  }
  return facts;
}

}  // namespace

json witness_summary(const deploy::WitnessView& w) {
  return {{"witness", w.witness},        {"source", w.source},     {"source6", w.source6}, {"nonce", w.nonce},
          {"records", w.records.size()}, {"complete", w.complete}, {"note", w.note}};
}

json attempt_json(const AttemptRecord& r) {
  ISOHARNESS_CHECK(r.job != nullptr && r.job->item != nullptr);
  const Job& job = *r.job;
  const policy::PlanItem& item = *job.item;
  json record = {{"id", r.name},
                 {"scenario", job.scenario},
                 {"item_id", item.id},
                 {"task", item.task},
                 {"item", item.item},
                 {"level", std::string(policy::level_name(item.level))},
                 {"runtime", job.runtime},
                 {"node_class", job.node_class},
                 {"attempt", r.attempt},
                 {"facts", facts_json(r)},
                 {"timings", r.timings},
                 {"posture", r.probe.posture ? *r.probe.posture : json(nullptr)},
                 {"checks", checks_json(r)},
                 {"error", r.error ? json(*r.error) : json(nullptr)}};
  if (r.tampered) record["tampered"] = true;
  if (!job.weakenings.empty()) record["weakenings"] = job.weakenings;
  if (r.probe.witness) record["witness"] = witness_summary(*r.probe.witness);
  if (r.probe.node_view) record["node_view"] = deploy::to_json(*r.probe.node_view);
  for (const auto& [service, seen] : r.probe.siblings.none_siblings)
    record["siblings"][service] = seen_json(seen);
  if (!r.peers.is_null()) record["peers"] = r.peers;
  if (r.stopped_run) record["stopped_run"] = true;
  return record;
}

}  // namespace isoharness::runner
