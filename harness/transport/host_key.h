// Host-key pinning: parsing OpenSSH public key lines and known_hosts text, SHA256
// fingerprints, and the decision "does the key this server presented match what we pinned".
// Pure functions over bytes and text; the libssh2 code calls them with the blob the
// server presented (libssh2_session_hostkey).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/common/expected.h"

namespace isoharness::transport {

// One public key: its algorithm name and the raw key blob (the base64-decoded bytes).
struct PublicKey {
  std::string type;      // "ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", ...
  std::string blob;      // binary
  bool revoked = false;  // from a known_hosts "@revoked" line

  std::string line() const;         // "ssh-ed25519 AAAA..." (OpenSSH public key line)
  std::string fingerprint() const;  // "SHA256:..." as ssh-keygen -l prints it
};

// Parses "type base64 [comment]". Refuses unknown types, bad base64, and a blob whose
// embedded type name disagrees with the line's type.
Expected<PublicKey> parse_public_key(std::string_view line);

// "SHA256:<base64 without padding>" of a key blob.
std::string sha256_fingerprint(std::string_view blob);

// The keys known_hosts text lists for host:port ("host" entries for port 22,
// "[host]:port" otherwise; comma lists, * and ? wildcards, !negations, hashed
// "|1|salt|hash" names and "@revoked" markers
// are understood; "@cert-authority" lines are ignored). A malformed line is an error
// naming source and line number.
Expected<std::vector<PublicKey>> known_hosts_keys(std::string_view text, std::string_view source,
                                                  std::string_view host, int port);

enum class KeyVerdict {
  match,    // the presented key is one of the pinned keys
  unknown,  // nothing is pinned for this host
  changed,  // keys are pinned, and the presented one is not among them (or is revoked)
};

// What to do with the key a server presented, given the keys pinned for it.
KeyVerdict check_host_key(std::string_view presented_type, std::string_view presented_blob,
                          const std::vector<PublicKey>& pinned);

// The libssh2 host-key method preference list that makes a server present a key of one of
// the pinned types ("ssh-ed25519", or "rsa-sha2-512,rsa-sha2-256,ssh-rsa" for RSA). Empty
// when nothing is pinned.
std::string hostkey_method_preference(const std::vector<PublicKey>& pinned);

}  // namespace isoharness::transport
