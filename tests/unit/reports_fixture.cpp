#include "tests/unit/reports_fixture.h"

#include <filesystem>
#include <fstream>
#include <regex>

#include "harness/parity/parity.h"
#include "tests/support/test_support.h"

namespace isoharness::test {

nlohmann::json result_fixture() {
  return nlohmann::json::parse(read_text(source_dir() + "/tests/fixtures/reports/result.json"));
}

nlohmann::json parity_section_fixture() {
  const auto in =
      nlohmann::json::parse(read_text(source_dir() + "/tests/fixtures/reports/parity_samples.json"));
  parity::SectionInput input;
  input.scenario = in.at("scenario");
  input.baseline = in.at("baseline");
  input.tolerance = in.at("tolerance");
  input.weights = in.at("weights").get<std::map<std::string, double>>();
  input.samples = in.at("samples").get<parity::Samples>();
  return parity::analyse(input);
}

nlohmann::json result_with_parity_fixture() {
  auto r = result_fixture();
  r["parity"] = parity_section_fixture();
  return r;
}

RunPageFixture run_page_fixture() {
  RunPageFixture f;
  f.current = result_fixture();
  auto& sbs = f.current["sandboxes"];
  const double times[] = {41.5, 38.25, 22.0, 30.5};
  for (std::size_t i = 0; i < sbs.size(); ++i)
    sbs[i]["timings"] = {{"deploy_s", times[i] / 4}, {"posture_s", times[i] / 2}, {"total_s", times[i]}};
  sbs[0]["checks"].push_back({{"control", "egress:metadata"},
                              {"status", "unwitnessed"},
                              {"expected", "blocked"},
                              {"observed", nullptr},
                              {"reason", "the witness recorded nothing for this sandbox's nonce"},
                              {"evidence", ""}});
  sbs[1]["checks"][3]["evidence"] =
      "judged by the sandbox's own report (no witness on this backend)\nconnect refused";
  sbs[1]["checks"][3]["self_reported"] = true;
  f.current["plans"]["mixed-eval-set"]["scenario"] = {{"path", "scenarios/mixed-eval-set.yaml"}};
  f.current["plans"]["mixed-eval-set"]["items"] = nlohmann::json::array(
      {{{"id", "gpu-trainer"}, {"source", {{"file", "scenarios/mixed-eval-set.yaml"}, {"line", 21}}}},
       {{"id", "bridge-iclr"}, {"source", {{"file", "scenarios/mixed-eval-set.yaml"}, {"line", 14}}}}});
  f.current["findings"][0]["severity"] = "known_risk";

  f.previous = f.current;
  f.previous["run"]["id"] = "20261128-020002-77aa";
  f.previous["context"]["started"] = "2026-11-28T02:00:02Z";
  for (auto& sb : f.previous["sandboxes"]) {
    sb["timings"]["total_s"] = sb["timings"]["total_s"].get<double>() - 10;
    for (auto& c : sb["checks"])
      if (c["status"] != "pass") c["status"] = "pass";
  }
  f.previous["sandboxes"][1]["checks"][0]["status"] = "fail";
  return f;
}

namespace {
void replace_all(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (std::size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
}
}  // namespace

std::string normalize_for_golden(std::string text, const nlohmann::json& context) {
  static const std::regex iso_time(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?)");
  static const std::regex tmp_path(R"(/tmp/[A-Za-z0-9._/-]+)");
  for (const char* key : {"host", "kernel", "git_revision", "tool_version"}) {
    auto it = context.find(key);
    if (it != context.end() && it->is_string())
      replace_all(text, it->get<std::string>(), std::string("<") + key + ">");
  }
  text = std::regex_replace(text, iso_time, "<time>");
  text = std::regex_replace(text, tmp_path, "<path>");
  return text;
}

bool matches_golden(const std::string& name, const std::string& ext, const std::string& actual,
                    const nlohmann::json& context) {
  const std::string dir = source_dir() + "/tests/golden/";
  const std::string approved = dir + name + ".approved." + ext;
  const std::string unapproved = dir + name + ".unapproved." + ext;
  const std::string normal = normalize_for_golden(actual, context);
  std::string expected;
  if (std::filesystem::exists(approved)) expected = read_text(approved);
  if (expected == normal) {
    std::filesystem::remove(unapproved);
    return true;
  }
  std::ofstream(unapproved, std::ios::binary) << normal;
  return false;
}

}  // namespace isoharness::test
