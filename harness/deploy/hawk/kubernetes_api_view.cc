// The hawk backend's view of the Kubernetes API (the profile's kubernetes_api: section,
// docs/CONTRACTS.md §4.9), read once per sandbox after its probe ran: the eval's pods, and
// when the profile names them the RuntimeClass objects and the namespace's
// CiliumNetworkPolicy objects. Each source is a command (an argv, no shell, one deadline,
// bounded output) or a file (bounded read), with {namespace} and {eval_set_id} replaced in
// every word. Anything that cannot be read makes the view unreadable: nothing is judged on
// it, and the checks that need it are unwitnessed.
#include <fmt/format.h>

#include <fstream>

#include "harness/common/subprocess.h"
#include "harness/deploy/hawk/hawk_backend.h"

namespace isoharness::deploy::hawk {
namespace {

std::string replace_all(std::string word, const std::string& from, const std::string& to) {
  for (std::size_t at = word.find(from); at != std::string::npos; at = word.find(from, at + to.size()))
    word.replace(at, from.size(), to);
  return word;
}

std::string substitute(const std::string& word, const std::string& ns, const std::string& eval_set_id) {
  return replace_all(replace_all(word, "{namespace}", ns), "{eval_set_id}", eval_set_id);
}

Expected<std::string> read_bounded_file(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot open " + path);
  std::string text(max_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (in.bad()) return make_error("cannot read " + path);
  if (text.size() > max_bytes) return make_error(fmt::format("{} is larger than {} bytes", path, max_bytes));
  return text;
}

}  // namespace

// One source's text, and in `who` how it was read (for the evidence).
Expected<std::string> HawkBackend::kube_api_text(const scenario::KubeApiSource& source, const std::string& ns,
                                                 const std::string& eval_set_id, std::string& who) const {
  const auto& k = *profile_.kubernetes_api;
  if (!source.file.empty()) {
    const std::string path = substitute(source.file, ns, eval_set_id);
    who = path;
    return read_bounded_file(path, k.max_bytes);
  }
  std::vector<std::string> argv;
  for (const auto& w : source.command) argv.push_back(substitute(w, ns, eval_set_id));
  who = render_argv(argv);
  RunOptions run;
  run.deadline = std::chrono::seconds(k.timeout_s);
  run.max_output = k.max_bytes;
  auto got = options_.runner ? options_.runner(argv, run) : run_command(argv, run);
  if (!got) return make_error("could not run " + who + ": " + got.error().message);
  if (got->out_truncated)
    return make_error(fmt::format("{} printed more than {} bytes", argv[0], k.max_bytes));
  if (!got->ok()) return make_error(who + " failed: " + got->describe());
  return std::move(got->out);
}

std::optional<KubernetesApiView> HawkBackend::kubernetes_api(const SandboxHandle& handle) const {
  KubernetesApiView view;
  if (profile_.kubernetes_api_none) view.state = KubernetesApiView::State::waived;
  if (!profile_.kubernetes_api) return view;  // absent, or waived
  const auto& k = *profile_.kubernetes_api;
  const std::string ns = handle.facts.sandbox_pod ? handle.facts.sandbox_pod->namespace_ : "";
  const std::string id = handle.name;
  const auto unreadable = [&](const std::string& why) {
    view.state = KubernetesApiView::State::unreadable;
    view.note = why;
    return view;
  };
  if (ns.empty()) return unreadable("hawk status named no sandbox pod, so the eval's namespace is not known");
  const KubeReadLimits limits{.max_bytes = k.max_bytes};
  std::string who;
  auto pods_text = kube_api_text(k.pods, ns, id, who);
  view.source = who;
  if (!pods_text) return unreadable("the pods: " + pods_text.error().message);
  auto pods = read_pod_list(*pods_text, limits);
  if (!pods) return unreadable("the pods (" + who + "): " + pods.error().message);
  view.pods = std::move(pods->pods);
  view.problems = std::move(pods->problems);
  if (k.runtime_classes) {
    auto text = kube_api_text(*k.runtime_classes, ns, id, who);
    auto classes =
        text ? read_runtime_classes(*text, limits) : Expected<std::vector<KubeRuntimeClass>>(text.error());
    if (!classes) return unreadable("the runtime classes (" + who + "): " + classes.error().message);
    view.runtime_classes = std::move(*classes);
    view.runtime_classes_read = true;
  }
  if (k.network_policies) {
    auto text = kube_api_text(*k.network_policies, ns, id, who);
    auto policies =
        text ? read_cilium_policies(*text, limits) : Expected<std::vector<CiliumPolicy>>(text.error());
    if (!policies) return unreadable("the network policies (" + who + "): " + policies.error().message);
    view.policies = std::move(*policies);
    view.policies_read = true;
  }
  view.state = KubernetesApiView::State::read;
  return view;
}

}  // namespace isoharness::deploy::hawk
