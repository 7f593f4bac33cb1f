// Internal to the scenario module: what the compose converter and the chart values reader
// share (where problems go, the facts a chart service implies, the finished definition).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/scenario/sandbox_definition.h"

namespace isoharness::scenario {

// Where a sandbox file's problems go: located by JSON pointer in that file.
struct SandboxProblems {
  const SourceMap& source;
  std::vector<Diagnostic>& errors;
  void operator()(const std::string& pointer, std::string message, std::string item = "") const {
    errors.push_back(source.diagnostic(pointer, std::move(item), std::move(message)));
  }
};

// Records something the task brings (TaskBrought) at pointer of the file being read.
void note_brought(const SandboxProblems& at, const std::string& pointer, BroughtKind kind, std::string what,
                  std::string message, SandboxDefinition& d);

// Each entity of a read allowEntities / allow_entities list other than world, at its place.
void note_entities(const nlohmann::json& list, const std::string& pointer, const SandboxProblems& at,
                   SandboxDefinition& d);

// A chart service's securityContext: each capabilities.add entry and privileged: true.
void note_service_privileges(const nlohmann::json& chart, const std::string& pointer,
                             const SandboxProblems& at, SandboxDefinition& d);

// The keys of a mapping in the order they are written in the file.
std::vector<std::string> keys_in_file_order(const nlohmann::json& mapping, const std::string& pointer,
                                            const SourceMap& source);

// A list of non-empty strings into out; false (with a problem) otherwise.
bool read_string_list(const nlohmann::json& v, const std::string& pointer, const SandboxProblems& problems,
                      std::vector<std::string>& out);

// The facts a service in the chart's shape implies: image, a GPU (a positive
// resources.limits or requests "nvidia.com/gpu"), root image user (securityContext.runAsUser
// 0; nothing when not stated) and network_mode none (networkIsolated: true).
ServiceFacts service_from_chart(std::string name, nlohmann::json chart);

// The chart's own default service (values.yaml: python:3.12-bookworm, `tail -f /dev/null`),
// which Helm merges in when the task's file names no service default; from_chart_values set.
ServiceFacts chart_default_service();

// Adds the chart's default service when the file names none, puts "default" first and takes the item-wide
// facts from the services: the runtime class the services pin (they must agree) and the default service's
// working directory. Problems are located at each service's pointer (pointers[i] belongs to d.services[i]).
void finish_definition(SandboxDefinition& d, const std::vector<std::string>& pointers,
                       const SandboxProblems& problems);

// Parses text as YAML and hands the document to read; every problem (YAML's own included)
// ends up in the result, in the order of the file.
using SandboxDocumentReader = std::function<void(const nlohmann::json& document,
                                                 const SandboxProblems& problems, SandboxDefinition& out)>;
SandboxReading read_sandbox_document(std::string_view text, const std::string& file,
                                     const SandboxDocumentReader& read);

// Orders diagnostics by line and column (stable), so they read top to bottom.
void sort_by_place(std::vector<Diagnostic>& errors);

}  // namespace isoharness::scenario
