// Planning a generated eval set of 1,000 items (100 bridged tasks x 10 items, a mix of
// standard, strict, egress, non_root/read_only_root and GPU items): parse, plan, to_json,
// each alone and all together. Run: build/bench/policy_bench (no arguments needed).
#include <benchmark/benchmark.h>

#include <string>

#include "harness/policy/plan.h"
#include "harness/scenario/scenario.h"

namespace {

using namespace isoharness;

const char* kDeployment = R"(
name: local
runtime_classes: [gvisor]
sandbox_runtime_class: gvisor
sandbox_runtime_class_is_default: false
runtime_handlers: { gvisor: runsc }
node_classes: { tier: {}, non-tier: {} }
)";

std::string generate(int tasks, int items_per_task) {
  std::string y = "name: bench\neval_set:\n  isolation: standard\n  tasks:\n";
  for (int t = 0; t < tasks; ++t) {
    y += "    - package: git+https://git.example.com/evals/bridge@v1." + std::to_string(t) + "\n";
    y += "      name: mtb\n      items:\n";
    for (int i = 0; i < items_per_task; ++i) {
      y += "        - name: bridge\n";
      y += "          args: { image_tag: task-" + std::to_string(t) + "-" + std::to_string(i) +
           ", seed: " + std::to_string(i) + " }\n";
      y += "          sample_ids: [s" + std::to_string(i) + ", s" + std::to_string(i + 1) + "]\n";
      switch (i % 5) {
        case 0:
          break;
        case 1:
          y += "          isolation: strict\n";
          break;
        case 2:
          y += "          isolation: { level: strict, allow_domains: [target.example.com], allow_cidr: "
               "[198.51.100.0/24] }\n";
          break;
        case 3:
          y += "          isolation: { level: strict, non_root: true, read_only_root: true }\n";
          break;
        case 4:
          y += "          isolation: { runtime_class: gvisor }\n";
          break;
      }
    }
  }
  y += "sandbox_defaults: { image: registry.example.com/evals/task:v1, image_user: non-root }\nsandboxes:\n";
  for (int t = 0; t < tasks; t += 7) {
    y += "  - { task: " + std::to_string(t) + ", item: 1, gpu: true, provider_tools: [web_search] }\n";
  }
  return y;
}

const std::string& eval_set_text() {
  static const std::string text = generate(100, 10);
  return text;
}

void BM_parse_1000(benchmark::State& state) {
  for (auto _ : state) {
    auto s = scenario::parse_scenario(eval_set_text(), "bench.yaml");
    benchmark::DoNotOptimize(s);
  }
}

void BM_plan_1000(benchmark::State& state) {
  auto s = scenario::parse_scenario(eval_set_text(), "bench.yaml");
  auto d = scenario::parse_deployment(kDeployment, "local.yaml");
  for (auto _ : state) {
    auto p = policy::plan_scenario(s, d, {});
    if (!p.accepted() || p.items.size() != 1000) state.SkipWithError("the generated eval set did not plan");
    benchmark::DoNotOptimize(p);
  }
}

void BM_to_json_1000(benchmark::State& state) {
  auto s = scenario::parse_scenario(eval_set_text(), "bench.yaml");
  auto d = scenario::parse_deployment(kDeployment, "local.yaml");
  auto p = policy::plan_scenario(s, d, {});
  for (auto _ : state) {
    auto j = policy::to_json(p).dump();
    benchmark::DoNotOptimize(j);
  }
}

void BM_parse_plan_json_1000(benchmark::State& state) {
  auto d = scenario::parse_deployment(kDeployment, "local.yaml");
  for (auto _ : state) {
    auto s = scenario::parse_scenario(eval_set_text(), "bench.yaml");
    auto p = policy::plan_scenario(s, d, {});
    auto j = policy::to_json(p).dump();
    benchmark::DoNotOptimize(j);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}

}  // namespace

BENCHMARK(BM_parse_1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_plan_1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_to_json_1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_parse_plan_json_1000)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
