// The sections of a deployment profile that belong to the hawk backend (`hawk:`,
// `egress:`, and each node class's `env` / `config_overrides`), read and checked with the
// file and line of every problem. Internal to the scenario module.
#pragma once

#include <vector>

#include "harness/scenario/scenario.h"

namespace isoharness::scenario::detail {

void read_hawk_section(const YamlDocument& doc, DeploymentProfile& profile, std::vector<Diagnostic>& errors);
// hawk.start_args (harness/scenario/hawk_start_args.cc): every word checked, into out.start_args.
void read_hawk_start_args(const YamlDocument& doc, const nlohmann::json& list, HawkSettings& out,
                          std::vector<Diagnostic>& errors);
void read_egress_section(const YamlDocument& doc, DeploymentProfile& profile,
                         std::vector<Diagnostic>& errors);
// node_view: none (harness/scenario/witness_section.cc): the deployment has no view of its
// nodes; posture checks rest on the sandbox's report.
void read_node_view_section(const YamlDocument& doc, DeploymentProfile& profile,
                            std::vector<Diagnostic>& errors);
// witness: (harness/scenario/witness_section.cc), an operator-run outside witness.
void read_witness_section(const YamlDocument& doc, DeploymentProfile& profile,
                          std::vector<Diagnostic>& errors);
// hubble: and node_image: (harness/scenario/hubble_section.cc).
void read_hubble_section(const YamlDocument& doc, DeploymentProfile& profile,
                         std::vector<Diagnostic>& errors);
// kubernetes_api: (harness/scenario/kubernetes_api_section.cc).
void read_kubernetes_api_section(const YamlDocument& doc, DeploymentProfile& profile,
                                 std::vector<Diagnostic>& errors);
void read_accepted_escapes(const YamlDocument& doc, DeploymentProfile& profile,
                           std::vector<Diagnostic>& errors);
void read_accepted_risks(const YamlDocument& doc, DeploymentProfile& profile,
                         std::vector<Diagnostic>& errors);
void read_node_image_section(const YamlDocument& doc, DeploymentProfile& profile,
                             std::vector<Diagnostic>& errors);
void read_node_class_settings(const YamlDocument& doc, DeploymentProfile& profile,
                              std::vector<Diagnostic>& errors);

}  // namespace isoharness::scenario::detail
