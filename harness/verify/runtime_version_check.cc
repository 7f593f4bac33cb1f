// runtime_version: the sandbox's runtime stack against the escape tables of its components
// (runtime_escapes.h, data files shipped with the tool). What applies to an item: the CRI
// runtime (containerd) to every item on a deployment; the OCI runtime of its runtime class
// (runc or crun for the node's default, runsc for gVisor); the NVIDIA Container Toolkit to
// items with a GPU service only. Each version comes from the sandbox's facts: locally the
// runtime's `--version` as the backend ran it ("runc version 1.1.12", on a distribution's
// build with "commit: <package version>"; "runsc version 0.0~20221219.0"); on a deployment
// the node image the profile declares (facts.node_image), since from inside a sandbox the
// node's runtime cannot be observed. A component is open to an escape unless its upstream
// version reaches the fix of its release branch or its package carries the fix. A pass
// names every CVE it checked per component; a version that is given but cannot be read
// fails; a component whose version nothing gives is n/a, saying so.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "harness/verify/checks_internal.h"
#include "harness/verify/debian_version.h"
#include "harness/verify/runtime_escapes.h"

namespace isoharness::verify {

namespace {

using C = RuntimeComponent;

struct Seen {
  C component = C::runc;
  std::string given;           // the version word as reported or declared; "" when none
  std::string package;         // the distribution package version, "" when none is known
  std::string observed;        // for the evidence
  std::string not_observable;  // why nothing gives its version ("" when something does)
};

// What the check found, component by component.
struct Findings {
  std::vector<std::string> cannot;   // unreadable versions, unreadable tables
  std::vector<std::string> open;     // open escapes nobody accepted
  std::vector<std::string> known;    // open escapes the profile accepts, gVisor past its age
  std::vector<std::string> checked;  // per component, every CVE and what it rested on
  std::vector<std::string> na;       // components that apply but whose version nothing gives
  std::vector<std::string> notes;    // runsc's release date, old tables, what does not apply
  std::vector<std::string> observed;
  std::vector<std::string> tables;
  bool judged = false;
};

std::string joined(const std::vector<std::string>& v, std::string_view by = "; ") {
  return fmt::format("{}", fmt::join(v, by));
}

// The word after `marker` on its line; "" when absent.
std::string word_after(const std::string& text, const std::string& marker) {
  const auto at = text.find(marker);
  if (at == std::string::npos) return "";
  const auto from = at + marker.size();
  const auto end = text.find_first_of(" \t\r\n;,", from);
  return text.substr(from, end == std::string::npos ? std::string::npos : end - from);
}

bool is_gvisor(std::string_view oci) {
  return oci == "runsc" || oci == "gvisor";
}

// The components of this item's stack, and a note for each that does not apply.
std::vector<C> stack_of(const RuntimeVersionInput& in, Findings& f) {
  const auto& facts = in.facts;
  const std::string oci = in.oci_runtime.empty() ? facts.runtime : in.oci_runtime;
  std::vector<C> out;
  if (facts.backend == scenario::BackendKind::local)
    f.notes.push_back("containerd: not in this stack (the local backend starts the OCI runtime itself)");
  else
    out.push_back(C::containerd);
  if (is_gvisor(oci)) {
    out.push_back(C::runsc);
    f.notes.push_back("runc's and crun's escapes do not apply to a gVisor sandbox");
  } else if (oci == "runc" || oci == "crun") {
    out.push_back(oci == "runc" ? C::runc : C::crun);
  } else if (oci.empty()) {  // the node's default: what the node image declares, else runc
    const auto& image = facts.node_image;
    if (image && !image->crun_version.empty()) out.push_back(C::crun);
    if (!image || !image->runc_version.empty() || image->crun_version.empty()) out.push_back(C::runc);
  } else {
    f.na.push_back(fmt::format("OCI runtime '{}': no escape table for it", oci));
  }
  if (in.gpu)
    out.push_back(C::nvidia_container_toolkit);
  else
    f.notes.push_back("nvidia-container-toolkit: no GPU service in this item");
  return out;
}

// A component's version as the node image declares it.
Seen declared(C c, const deploy::NodeImageFacts& image) {
  const std::pair<const std::string*, const std::string*> fields[] = {
      {&image.containerd_version, &image.containerd_package},
      {&image.runc_version, &image.runc_package},
      {&image.crun_version, &image.crun_package},
      {&image.runsc_version, &image.runsc_package},
      {&image.nvidia_container_toolkit_version, &image.nvidia_container_toolkit_package}};
  const auto& [version, package] = fields[static_cast<int>(c)];
  std::string key = std::string(component_name(c)) + "_version";  // node_image's key
  std::replace(key.begin(), key.end(), '-', '_');
  Seen s{c, *version, *package, "", ""};
  if (version->empty()) {
    s.not_observable = fmt::format("not declared (node_image.{} of {})", key, image.name);
    return s;
  }
  s.observed = fmt::format("node image {} (declared by the deployment profile): {} {}{}", image.name,
                           component_name(c), *version, package->empty() ? "" : ", package " + *package);
  return s;
}

// A component's version as the backend ran it (its --version text), or why none is known.
Seen reported(C c, const deploy::SandboxFacts& facts) {
  Seen s{c, "", "", facts.runtime_version, ""};
  const std::string name(component_name(c));
  const bool ran = facts.runtime == name || (c == C::runsc && is_gvisor(facts.runtime));
  if (c == C::containerd || c == C::nvidia_container_toolkit || !ran || facts.runtime_version.empty()) {
    s.not_observable = fmt::format(
        "not observable from inside the sandbox: the deployment reports no {} version (declare the nodes' "
        "image and its {}_version in the profile's node_image:)",
        name, c == C::nvidia_container_toolkit ? "nvidia_container_toolkit" : name);
    return s;
  }
  s.given = word_after(facts.runtime_version, name + " version ");
  // A distribution's build names its package version where upstream names a commit.
  const std::string commit = word_after(facts.runtime_version, "commit: ");
  if (debian_version_shape(commit)) s.package = commit;
  return s;
}

// The version the table compares, "" when the word given cannot be read as one.
std::string comparable(const Seen& s) {
  if (s.component == C::runsc) {
    const auto r = runsc_release_of(s.given);
    return r ? r->version : "";
  }
  const std::string v = upstream_as_debian(s.given);
  return debian_version_shape(v) ? v : "";
}

std::string accepted_reason(const RuntimeVersionInput& in, C c, const std::string& cve) {
  const auto it = in.accepted.find({std::string(component_name(c)), cve});
  return it == in.accepted.end() ? "" : it->second;
}

// Every escape of one table judged against one component's version.
void judge(const RuntimeVersionInput& in, const EscapeTable& table, const Seen& seen,
           const std::string& upstream, Findings& f) {
  const std::string name(component_name(seen.component));
  std::vector<std::string> checked;
  for (const auto& e : table.escapes) {
    const std::string fix = fixed_by(e, upstream, seen.component != C::runsc);
    const FixCarrier* carrier = fix.empty() && !seen.package.empty() ? carried_by(e, seen.package) : nullptr;
    const std::string inside = e.seen_by.empty() ? "" : "; its effect is seen from inside by " + e.seen_by;
    if (!fix.empty() || carrier) {
      checked.push_back(
          fmt::format("{} ({})", e.cve,
                      carrier ? fmt::format("{} package {} carries the fix", carrier->where, carrier->version)
                              : "fixed in " + fix));
      continue;
    }
    const std::string open =
        fmt::format("{} {} ({}; fixed in {}{})", name, e.cve, e.what, joined(e.fixed, ", "), inside);
    if (const std::string why = accepted_reason(in, seen.component, e.cve); !why.empty())
      f.known.push_back("open to " + open + ", accepted by the deployment profile: " + why);
    else
      f.open.push_back(open);
  }
  f.checked.push_back(checked.empty()
                          ? fmt::format("{}: no escape in its table is fixed in {}{}", name, seen.given,
                                        table.escapes.empty() ? " (it lists none)" : "")
                          : fmt::format("{}: {}", name, joined(checked, ", ")));
}

long long day_of(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::days>(t.time_since_epoch()).count();
}

// runsc's release date and age, a known risk past the profile's limit.
void gvisor_age(const RuntimeVersionInput& in, const Seen& seen, Findings& f) {
  const auto release = runsc_release_of(seen.given);
  if (!release) return;
  const long long age = day_of(in.now) - release->day;
  const std::string line = fmt::format("runsc released {} ({} days before this run)", release->date, age);
  if (age > in.runsc_max_age_days)
    f.known.push_back(fmt::format("{}, older than the deployment profile's runsc_max_age_days ({})", line,
                                  in.runsc_max_age_days));
  else
    f.notes.push_back(line);
}

void table_age(const RuntimeVersionInput& in, const EscapeTable& table, Findings& f) {
  if (std::string note = stale_table_note(table, day_of(in.now)); !note.empty())
    f.notes.push_back(std::move(note));
}

void judge_component(const RuntimeVersionInput& in, C c, Findings& f) {
  const Seen seen = in.facts.node_image ? declared(c, *in.facts.node_image) : reported(c, in.facts);
  const std::string name(component_name(c));
  if (!seen.not_observable.empty()) {
    f.na.push_back(name + ": " + seen.not_observable);
    if (c == C::runsc)
      f.notes.push_back("runsc's release date: not observable (" + seen.not_observable + ")");
    return;
  }
  f.observed.push_back(seen.observed);
  const std::string upstream = comparable(seen);
  if (upstream.empty()) {
    f.cannot.push_back(fmt::format("cannot read a {} version from '{}'", name, seen.given));
    return;
  }
  const auto& table = (in.tables ? *in.tables : shipped_escape_tables()).of(c);
  if (!table) {
    f.cannot.push_back(name + ": " + table.error().message);
    return;
  }
  f.judged = true;
  f.tables.push_back(table->source);
  table_age(in, *table, f);
  judge(in, *table, seen, upstream, f);
  if (c == C::runsc) gvisor_age(in, seen, f);
}

std::string tail_of(const Findings& f) {
  std::string out;
  if (!f.na.empty()) out += "; n/a: " + joined(f.na);
  if (!f.notes.empty()) out += "; " + joined(f.notes);
  return out;
}

}  // namespace

CheckResult check_runtime_version(const RuntimeVersionInput& in) {
  Findings f;
  for (const C c : stack_of(in, f)) judge_component(in, c, f);
  const std::string observed = f.observed.empty() ? in.facts.runtime_version : joined(f.observed);
  const std::string expected =
      fmt::format("the runtime stack with the fixes of the escapes in {}",
                  f.tables.empty() ? std::string("its components' escape tables") : joined(f.tables, ", "));
  if (!f.cannot.empty())
    return detail::make("runtime_version", false, expected, observed,
                        "runtime_version: cannot judge: " + joined(f.cannot) + tail_of(f));
  if (!f.open.empty())
    return detail::make("runtime_version", false, expected, observed,
                        "runtime_version: the runtime stack is open to a published escape (escape class: "
                        "runtime escapes): " +
                            joined(f.open) + (f.known.empty() ? "" : "; known risk: " + joined(f.known)) +
                            tail_of(f));
  if (!f.judged)
    return detail::not_applicable("runtime_version",
                                  joined(f.na) + (f.notes.empty() ? "" : "; " + joined(f.notes)), observed);
  const std::string checked = "checked " + joined(f.checked) + tail_of(f);
  if (!f.known.empty()) {
    CheckResult c = detail::make("runtime_version", true, expected, observed,
                                 std::string(kKnownRiskPrefix) + joined(f.known) + "; " + checked);
    c.known_risk = true;
    return c;
  }
  return detail::make("runtime_version", true, expected, observed, checked);
}

CheckResult check_runtime_version(const deploy::SandboxFacts& facts, const AcceptedEscapes& accepted) {
  return check_runtime_version(RuntimeVersionInput{facts, accepted});
}

}  // namespace isoharness::verify
