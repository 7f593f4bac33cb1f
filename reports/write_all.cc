// write_all: every report file of one result document into one directory.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "harness/common/error.h"
#include "harness/common/text.h"
#include "reports/document_shape.h"
#include "reports/reports.h"
#include "reports/text_format.h"

namespace isoharness::reports {

namespace {

namespace fs = std::filesystem;

// Written whole or not at all (common::write_file_atomically), so a reader never sees half a file.
void write_file(const fs::path& path, const std::string& text, std::vector<std::string>& written) {
  if (auto done = common::write_file_atomically(path.string(), text); !done)
    throw UserError(done.error().message);
  written.push_back(path.string());
}

void make_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw UserError(fmt::format("cannot create the output directory {}: {}", dir.string(),
                                ec ? ec.message() : "not a directory"));
  }
}

}  // namespace

std::vector<std::string> write_all(const nlohmann::json& result, const std::string& out_dir,
                                   const ReportInputs& inputs) {
  // Render everything first: a document that cannot be rendered leaves no partial output.
  check_result_shape(result);
  const std::string json = render_json(result);
  const std::string md = render_markdown(result);
  const std::string junit = render_junit(result);
  const std::string html = render_run_html(result, inputs.previous);
  const std::string sarif =
      inputs.sarif_path.empty()
          ? ""
          : render_sarif(sarif_findings(result), str_or(result["context"], "tool_version"));
  const std::string metrics = inputs.metrics_path.empty() ? "" : render_openmetrics(result);
  const nlohmann::json parity = result.contains("parity") ? result["parity"] : nlohmann::json();
  const nlohmann::json& context = result["context"];
  const bool has_parity = !parity.is_null();
  std::string parity_md, parity_html;
  std::map<std::string, nlohmann::json> cells;
  if (has_parity) {
    parity_md = render_parity_markdown(parity, context);
    parity_html = render_parity_html(parity, context);
    cells = render_benchmark_cells(parity, context);
  }

  const fs::path dir(out_dir);
  make_dir(dir);
  std::vector<std::string> written;
  write_file(dir / "result.json", json, written);
  write_file(dir / "report.md", md, written);
  write_file(dir / "report.html", html, written);
  write_file(dir / "junit.xml", junit, written);
  if (!inputs.sarif_path.empty()) write_file(inputs.sarif_path, sarif, written);
  if (!inputs.metrics_path.empty()) write_file(inputs.metrics_path, metrics, written);
  if (has_parity) {
    write_file(dir / "parity.md", parity_md, written);
    write_file(dir / "parity.html", parity_html, written);
    make_dir(dir / "cells");
    for (const auto& [name, doc] : cells) write_file(dir / "cells" / name, doc.dump(2) + "\n", written);
  }
  return written;
}

}  // namespace isoharness::reports
