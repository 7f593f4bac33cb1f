#include "harness/transport/ssh_session.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>

#include "harness/transport/host_key.h"

namespace isoharness::transport {
namespace {

int millis_until(Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return left > 60'000 ? 60'000 : static_cast<int>(left);
}

std::string key_type_name(int type) {
  switch (type) {
    case LIBSSH2_HOSTKEY_TYPE_RSA:
      return "ssh-rsa";
    case LIBSSH2_HOSTKEY_TYPE_DSS:
      return "ssh-dss";
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
      return "ecdsa-sha2-nistp256";
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
      return "ecdsa-sha2-nistp384";
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
      return "ecdsa-sha2-nistp521";
    case LIBSSH2_HOSTKEY_TYPE_ED25519:
      return "ssh-ed25519";
    default:
      return "unknown";
  }
}

std::string fingerprints(const std::vector<PublicKey>& keys) {
  std::string out;
  for (const auto& k : keys) {
    if (k.revoked) continue;
    out += (out.empty() ? "" : ", ") + k.type + " " + k.fingerprint();
  }
  return out;
}

Expected<std::vector<PublicKey>> pinned_keys(const SshEndpoint& endpoint, const std::string& extra_text,
                                             const std::string& extra_source, const std::string& what) {
  std::vector<PublicKey> pinned;
  if (!endpoint.host_key.empty()) {
    auto key = parse_public_key(endpoint.host_key);
    if (!key)
      return make_error(fmt::format("{}: pinned host key is malformed: {}", what, key.error().message));
    pinned.push_back(std::move(*key));
  }
  if (!extra_text.empty()) {
    auto more = known_hosts_keys(extra_text, extra_source, endpoint.host, endpoint.port);
    if (!more) return more.error();
    for (auto& k : *more) pinned.push_back(std::move(k));
  }
  return pinned;
}

// Tries the agent's identities, at most 64 of them, in turn.
Status authenticate_with_agent(const SshSession& s, const std::string& user, const Credentials& credentials,
                               Deadline deadline) {
  LIBSSH2_AGENT* agent = libssh2_agent_init(s.get());
  if (!agent) return make_error(fmt::format("{}: cannot initialise the ssh agent client", s.what()));
  std::unique_ptr<LIBSSH2_AGENT, void (*)(LIBSSH2_AGENT*)> guard(agent, [](LIBSSH2_AGENT* a) {
    libssh2_agent_disconnect(a);
    libssh2_agent_free(a);
  });
  if (!credentials.agent_socket.empty())
    libssh2_agent_set_identity_path(agent, credentials.agent_socket.c_str());
  if (libssh2_agent_connect(agent) != 0) {
    return make_error(
        fmt::format("{}: cannot reach the ssh agent at {}", s.what(),
                    credentials.agent_socket.empty() ? "$SSH_AUTH_SOCK" : credentials.agent_socket));
  }
  if (libssh2_agent_list_identities(agent) != 0) {
    return make_error(fmt::format("{}: cannot list the ssh agent's identities", s.what()));
  }
  libssh2_agent_publickey* identity = nullptr;
  libssh2_agent_publickey* prev = nullptr;
  int tried = 0;
  while (tried < 64 && libssh2_agent_get_identity(agent, &identity, prev) == 0) {
    ++tried;
    int rc = s.call(deadline, [&] { return libssh2_agent_userauth(agent, user.c_str(), identity); });
    if (rc == 0) return Ok{};
    if (rc == LIBSSH2_ERROR_TIMEOUT) return make_error(fmt::format("{}: authentication timed out", s.what()));
    prev = identity;
  }
  return make_error(
      fmt::format("{}: none of the agent's {} key(s) was accepted for user '{}'", s.what(), tried, user));
}

Status authenticate(const SshSession& s, const SshEndpoint& endpoint, const Credentials& credentials,
                    Deadline deadline) {
  LIBSSH2_SESSION* session = s.get();
  const std::string& user = endpoint.user;
  if (credentials.use_agent) return authenticate_with_agent(s, user, credentials, deadline);
  if (credentials.private_key_path.empty()) {
    return make_error(fmt::format("{}: no private key file given and the agent not requested", s.what()));
  }
  if (!std::ifstream(credentials.private_key_path)) {
    return make_error(fmt::format("{}: cannot read private key {}", s.what(), credentials.private_key_path));
  }
  const char* pub = credentials.public_key_path.empty() ? nullptr : credentials.public_key_path.c_str();
  int rc = s.call(deadline, [&] {
    return libssh2_userauth_publickey_fromfile_ex(session, user.c_str(), static_cast<unsigned>(user.size()),
                                                  pub, credentials.private_key_path.c_str(), "");
  });
  if (rc != 0) {
    // libssh2 1.10 signs RSA keys with SHA-1 only, which OpenSSH 8.8 and later refuse.
    std::string pub_path = credentials.public_key_path.empty() ? credentials.private_key_path + ".pub"
                                                               : credentials.public_key_path;
    std::string first(16, '\0');
    std::ifstream(pub_path).read(first.data(), 16);
    std::string hint = first.rfind("ssh-rsa ", 0) == 0
                           ? " (an RSA key: libssh2 1.10 can only sign it with SHA-1, "
                             "which OpenSSH 8.8+ refuses; use an ed25519 key)"
                           : "";
    return make_error(fmt::format("{}: key authentication as '{}' with {} failed: {}{}", s.what(), user,
                                  credentials.private_key_path, describe_rc(s, rc), hint));
  }
  return Ok{};
}

}  // namespace

void ensure_libssh2_initialised() {
  static std::once_flag once;
  std::call_once(once, [] { libssh2_init(0); });
}

Expected<int> tcp_connect(const std::string& host, int port, Deadline deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string service = std::to_string(port);
  int gai = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (gai != 0) return make_error(fmt::format("cannot resolve {}: {}", host, gai_strerror(gai)));
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> guard(found, freeaddrinfo);
  std::string last = "no address";
  for (addrinfo* ai = found; ai; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last = std::strerror(errno);
      continue;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int n = ::poll(&p, 1, millis_until(deadline));
      if (n == 1) {
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        rc = err == 0 ? 0 : -1;
        errno = err;
      } else {
        rc = -1;
        errno = ETIMEDOUT;
      }
    }
    if (rc == 0) return fd;
    last = std::strerror(errno);
    ::close(fd);
  }
  return make_error(fmt::format("cannot connect to {}:{}: {}", host, port, last));
}

SshSession::SshSession(LIBSSH2_SESSION* session, int fd, std::string what)
    : session_(session), fd_(fd), what_(std::move(what)) {}

SshSession::~SshSession() {
  Deadline grace = Clock::now() + std::chrono::milliseconds(500);
  call(grace, [&] { return libssh2_session_disconnect(session_, "bye"); });
  // Whatever is still queued cannot be sent now: make every further socket call fail at
  // once so that freeing the session cannot wait on the network.
  ::shutdown(fd_, SHUT_RDWR);
  for (int i = 0; i < 100 && libssh2_session_free(session_) == LIBSSH2_ERROR_EAGAIN; ++i) {
  }
  ::close(fd_);
}

bool SshSession::wait(Deadline deadline) const {
  int dirs = libssh2_session_block_directions(session_);
  short events = 0;
  if (dirs & LIBSSH2_SESSION_BLOCK_INBOUND) events |= POLLIN;
  if (dirs & LIBSSH2_SESSION_BLOCK_OUTBOUND) events |= POLLOUT;
  if (events == 0) events = POLLIN;
  for (;;) {
    int left = millis_until(deadline);
    if (left == 0) return false;
    pollfd p{fd_, events, 0};
    int n = ::poll(&p, 1, left);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return true;  // let the libssh2 call report the error
  }
}

std::string SshSession::last_error() const {
  if (timed_out_ && libssh2_session_last_errno(session_) == LIBSSH2_ERROR_EAGAIN) return "timed out";
  char* msg = nullptr;
  int len = 0;
  libssh2_session_last_error(session_, &msg, &len, 0);
  return msg && len > 0 ? std::string(msg, static_cast<std::size_t>(len)) : "unknown libssh2 error";
}

std::string describe_rc(const SshSession& session, int rc) {
  if (rc == LIBSSH2_ERROR_TIMEOUT) return "timed out";
  return session.last_error();
}

Expected<std::unique_ptr<SshSession>> SshSession::establish(
    int fd, const SshEndpoint& endpoint, const std::string& extra_pinned_text,
    const std::string& extra_pinned_source, const Credentials& credentials, const HostKeyPolicy& policy,
    Deadline deadline, const std::string& what, std::optional<AcceptedKey>* accepted) {
  ensure_libssh2_initialised();
  auto pinned = pinned_keys(endpoint, extra_pinned_text, extra_pinned_source, what);
  if (!pinned) {
    ::close(fd);
    return pinned.error();
  }
  LIBSSH2_SESSION* raw = libssh2_session_init();
  if (!raw) {
    ::close(fd);
    return make_error(what + ": cannot create a libssh2 session");
  }
  std::unique_ptr<SshSession> s(new SshSession(raw, fd, what));
  libssh2_session_set_blocking(raw, 0);
  std::string prefs = hostkey_method_preference(*pinned);
  if (!prefs.empty() && libssh2_session_method_pref(raw, LIBSSH2_METHOD_HOSTKEY, prefs.c_str()) != 0) {
    return make_error(fmt::format("{}: libssh2 supports none of the pinned key types ({})", what, prefs));
  }
  int rc = s->call(deadline, [&] { return libssh2_session_handshake(raw, fd); });
  if (rc != 0) return make_error(fmt::format("{}: SSH handshake failed: {}", what, describe_rc(*s, rc)));

  std::size_t len = 0;
  int type = 0;
  const char* blob = libssh2_session_hostkey(raw, &len, &type);
  if (!blob || len == 0) return make_error(what + ": the server presented no host key");
  std::string_view presented(blob, len);
  std::string type_name = key_type_name(type);
  std::string fp = sha256_fingerprint(presented);
  switch (check_host_key(type_name, presented, *pinned)) {
    case KeyVerdict::match:
      break;
    case KeyVerdict::changed:
      return make_error(fmt::format(
          "{}: refused: HOST KEY CHANGED or revoked: the server presented {} {}, but the pinned key is {}",
          what, type_name, fp, fingerprints(*pinned).empty() ? "revoked" : fingerprints(*pinned)));
    case KeyVerdict::unknown:
      if (!policy.accept_new) {
        return make_error(
            fmt::format("{}: refused: host key {} {} is not pinned (pin it, or explicitly accept new keys)",
                        what, type_name, fp));
      }
      if (accepted) {
        PublicKey key{type_name, std::string(presented), false};
        *accepted = AcceptedKey{endpoint.host, endpoint.port, key.line(), fp};
      }
      break;
  }
  auto auth = authenticate(*s, endpoint, credentials, deadline);
  if (!auth) return auth.error();
  return s;
}

}  // namespace isoharness::transport
