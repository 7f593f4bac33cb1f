// Host-key pinning on fixture keys (tests/fixtures/transport, made with ssh-keygen), and
// the shell quoting a remote exec relies on, checked through a real /bin/sh.
#include <catch2/catch.hpp>
#include <sstream>

#include "harness/common/subprocess.h"
#include "harness/transport/host_key.h"
#include "tests/support/test_support.h"

using namespace isoharness;
using namespace isoharness::transport;

namespace {

std::string fixture(const std::string& name) {
  return test::read_text(test::source_dir() + "/tests/fixtures/transport/" + name);
}

PublicKey key(const std::string& name) {
  auto k = parse_public_key(fixture(name));
  REQUIRE(k.has_value());
  return *k;
}

// The SHA256 fingerprint ssh-keygen -l printed for a fixture (fingerprints.txt).
std::string keygen_fingerprint(const std::string& comment) {
  std::istringstream in(fixture("fingerprints.txt"));
  std::string bits, fp, c;
  while (in >> bits >> fp >> c) {
    std::string rest;
    std::getline(in, rest);
    if (c == comment) return fp;
  }
  FAIL("no fingerprint for " << comment);
  return {};
}

std::vector<PublicKey> known(const std::string& host, int port) {
  auto keys = known_hosts_keys(fixture("known_hosts"), "known_hosts", host, port);
  REQUIRE(keys.has_value());
  return *keys;
}

}  // namespace

TEST_CASE("public key lines parse, print back and fingerprint like ssh-keygen", "[transport]") {
  struct Case {
    const char* file;
    const char* type;
    const char* comment;
  };
  for (auto c : {Case{"ed25519_a.pub", "ssh-ed25519", "fixture-a"}, Case{"rsa.pub", "ssh-rsa", "fixture-rsa"},
                 Case{"ecdsa.pub", "ecdsa-sha2-nistp256", "fixture-ecdsa"}}) {
    PublicKey k = key(c.file);
    CHECK(k.type == c.type);
    CHECK(k.fingerprint() == keygen_fingerprint(c.comment));
    std::string text = fixture(c.file);
    CHECK(text.rfind(k.line() + " ", 0) == 0);  // type and base64 exactly as the file has them
  }
}

TEST_CASE("malformed public keys are refused", "[transport]") {
  std::string a = fixture("ed25519_a.pub");
  std::string b64 = a.substr(a.find(' ') + 1);
  b64 = b64.substr(0, b64.find(' '));
  CHECK_THAT(parse_public_key("ssh-rsa " + b64).error().message, Catch::Contains("different type"));
  CHECK_THAT(parse_public_key("ssh-ed25519 AAAA$$$").error().message, Catch::Contains("base64"));
  CHECK_THAT(parse_public_key("ssh-foo " + b64).error().message, Catch::Contains("unknown public key type"));
  CHECK_THAT(parse_public_key("ssh-ed25519").error().message, Catch::Contains("needs a key type"));
  CHECK_THAT(parse_public_key("").error().message, Catch::Contains("needs a key type"));
  CHECK_THAT(parse_public_key("ssh-ed25519 " + b64 + "\nssh-rsa x").error().message,
             Catch::Contains("line break"));
  CHECK_FALSE(parse_public_key("ssh-ed25519 " + b64.substr(0, 20)).has_value());  // truncated blob
}

TEST_CASE("the pin decides: match, unknown, changed", "[transport]") {
  PublicKey a = key("ed25519_a.pub"), b = key("ed25519_b.pub"), r = key("rsa.pub");
  CHECK(check_host_key(a.type, a.blob, {a}) == KeyVerdict::match);
  CHECK(check_host_key(a.type, a.blob, {r, a}) == KeyVerdict::match);
  CHECK(check_host_key(b.type, b.blob, {a}) == KeyVerdict::changed);
  CHECK(check_host_key(r.type, r.blob, {a}) == KeyVerdict::changed);  // other type: still a change
  CHECK(check_host_key(a.type, a.blob, {}) == KeyVerdict::unknown);
  PublicKey revoked_b = b;
  revoked_b.revoked = true;
  CHECK(check_host_key(b.type, b.blob, {revoked_b}) == KeyVerdict::changed);
  CHECK(check_host_key(a.type, a.blob, {revoked_b}) == KeyVerdict::unknown);
  CHECK(check_host_key(b.type, b.blob, {revoked_b, b}) == KeyVerdict::changed);  // revoked wins
}

TEST_CASE("known_hosts: names, ports, wildcards, hashed names, markers", "[transport]") {
  PublicKey a = key("ed25519_a.pub"), b = key("ed25519_b.pub"), r = key("rsa.pub"), e = key("ecdsa.pub");
  auto blobs = [](const std::vector<PublicKey>& ks) {
    std::vector<std::string> out;
    for (const auto& k : ks) out.push_back((k.revoked ? "!" : "") + k.fingerprint());
    return out;
  };
  CHECK(blobs(known("192.0.2.1", 22)) == std::vector<std::string>{a.fingerprint()});
  CHECK(blobs(known("192.0.2.1", 2022)) == std::vector<std::string>{r.fingerprint()});
  CHECK(blobs(known("JUMP.example", 22)) == std::vector<std::string>{a.fingerprint(), e.fingerprint()});
  CHECK(blobs(known("hashed.example", 22)) == std::vector<std::string>{e.fingerprint(), e.fingerprint()});
  CHECK(known("notme.example", 22).empty());  // negated in the wildcard line
  CHECK(known("hashed.example", 2022).empty());
  CHECK(known("192.0.2.2", 22).empty());
  auto old = known("old.example", 22);
  CHECK(blobs(old) == std::vector<std::string>{"!" + b.fingerprint(), a.fingerprint(), e.fingerprint()});
  CHECK(check_host_key(b.type, b.blob, old) == KeyVerdict::changed);
  CHECK(check_host_key(a.type, a.blob, old) == KeyVerdict::match);
}

TEST_CASE("malformed known_hosts lines name the file and line", "[transport]") {
  auto bad = known_hosts_keys("# ok\nhost ssh-ed25519\n", "kh", "host", 22);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message == "kh:2: expected 'hosts keytype base64-key'");
  auto bad_key = known_hosts_keys("\n\nhost ssh-ed25519 AAAA!!\n", "kh", "host", 22);
  REQUIRE_FALSE(bad_key.has_value());
  CHECK_THAT(bad_key.error().message, Catch::StartsWith("kh:3:") && Catch::Contains("base64"));
  auto marker = known_hosts_keys("@bogus host ssh-ed25519 AAAA\n", "kh", "host", 22);
  REQUIRE_FALSE(marker.has_value());
  CHECK_THAT(marker.error().message, Catch::Contains("kh:1: unknown marker '@bogus'"));
  // Lines for other hosts are not even parsed beyond their host field.
  CHECK(known_hosts_keys("other ssh-ed25519 AAAA!!\n", "kh", "host", 22).has_value());
}

TEST_CASE("host-key method preference follows the pinned types", "[transport]") {
  CHECK(hostkey_method_preference({key("ed25519_a.pub")}) == "ssh-ed25519");
  CHECK(hostkey_method_preference({key("rsa.pub"), key("ed25519_a.pub"), key("ed25519_b.pub")}) ==
        "rsa-sha2-512,rsa-sha2-256,ssh-rsa,ssh-ed25519");
  CHECK(hostkey_method_preference({}).empty());
}

TEST_CASE("shell quoting survives a real shell word for word", "[transport]") {
  std::vector<std::string> words = {"plain", "two words",   "it's",      "$HOME",  "`id`",
                                    "a\"b",  "back\\slash", "new\nline", "",       "*",
                                    "-n",    "; rm -rf /",  "tab\there", "ünïcode"};
  auto r = run_command({"sh", "-c", "printf '%s\\0' " + shell_join(words)});
  REQUIRE(r.has_value());
  REQUIRE(r->ok());
  std::vector<std::string> back;
  std::string cur;
  for (char c : r->out) {
    if (c == '\0') {
      back.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  CHECK(back == words);
}
