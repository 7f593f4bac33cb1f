// report_inputs: what the reports read besides the result document (sandbox_command.h).
#include <fstream>

#include "harness/runner/sandbox_command.h"

namespace isoharness::runner {

namespace {

constexpr std::streamsize kMaxPreviousBytes = 256 << 20;  // a result of thousands of sandboxes

nlohmann::json read_previous(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "cannot open " + path;
  const std::streamsize size = in.tellg();
  if (size < 0) return "cannot read " + path;
  if (size > kMaxPreviousBytes) return path + " is larger than 256 MiB";
  std::string text(static_cast<std::size_t>(size), '\0');
  in.seekg(0);
  in.read(text.data(), size);
  text.resize(static_cast<std::size_t>(in.gcount()));
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) return path + " is not JSON";
  return doc;
}

}  // namespace

reports::ReportInputs report_inputs(const SandboxCommand& command, const nlohmann::json& result) {
  reports::ReportInputs inputs;
  inputs.sarif_path = command.sarif_path;
  inputs.metrics_path = command.metrics_path;
  try {
    if (!command.previous_path.empty()) {
      inputs.previous = read_previous(command.previous_path);
    } else if (command.find_previous) {
      inputs.previous = command.find_previous(result);
    }
  } catch (const std::exception& e) {
    inputs.previous = std::string("the previous run could not be found: ") + e.what();
  }
  return inputs;
}

}  // namespace isoharness::runner
