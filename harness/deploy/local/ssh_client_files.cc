#include "harness/deploy/local/ssh_client_files.h"

#include <yaml-cpp/yaml.h>

#include "harness/common/error.h"
#include "harness/common/subprocess.h"
#include "harness/deploy/local/host_ops.h"

namespace isoharness::deploy::local {
namespace {

std::string host_entry(const SshEndpoint& e) {
  return e.port == 22 ? e.host : "[" + e.host + "]:" + std::to_string(e.port);
}

nlohmann::json yaml_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& kv : n) out[kv.first.as<std::string>()] = yaml_to_json(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& v : n) out.push_back(yaml_to_json(v));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted in the source: a string
      if (s == "true" || s == "false") return s == "true";
      if (!s.empty() && s.find_first_not_of("0123456789-") == std::string::npos && s != "-") {
        try {
          return std::stoll(s);
        } catch (...) {
        }
      }
      return s;
    }
    default:
      return nullptr;
  }
}

}  // namespace

std::string known_hosts_lines(const SshRoute& route) {
  return host_entry(route.jump) + " " + route.jump.host_key + "\n" + host_entry(route.sandbox) + " " +
         route.sandbox.host_key + "\n";
}

std::string ssh_client_config(const std::string& known_hosts_path, const std::string& identity_file) {
  std::string c = "Host *\n";
  c += "  UserKnownHostsFile " + known_hosts_path + "\n";
  c += "  GlobalKnownHostsFile /dev/null\n";
  c += "  StrictHostKeyChecking yes\n  BatchMode yes\n  ConnectTimeout 10\n  LogLevel ERROR\n";
  if (!identity_file.empty()) c += "  IdentitiesOnly yes\n  IdentityFile " + identity_file + "\n";
  return c;
}

std::vector<std::string> ssh_argv(const SshRoute& route, const std::string& config_path,
                                  const std::vector<std::string>& command) {
  std::vector<std::string> argv = {
      "ssh",
      "-F",
      config_path,
      "-J",
      route.jump.user + "@" + route.jump.host + ":" + std::to_string(route.jump.port),
      "-p",
      std::to_string(route.sandbox.port),
      route.sandbox.user + "@" + route.sandbox.host};
  if (!command.empty()) {
    // sshd hands the command line to the remote user's shell: quote every word.
    argv.push_back("--");
    argv.push_back(shell_join(command));
  }
  return argv;
}

nlohmann::json load_profile_file(const std::string& path) {
  std::string text = read_file_bounded(path, 1 << 20);
  if (text.empty())
    throw UserError(std::vector<Diagnostic>{{path, 0, 0, "", "cannot read the deployment profile"}});
  try {
    return yaml_to_json(YAML::Load(text));
  } catch (const YAML::Exception& e) {
    throw UserError(std::vector<Diagnostic>{{path, e.mark.line + 1, e.mark.column + 1, "", e.msg}});
  }
}

}  // namespace isoharness::deploy::local
