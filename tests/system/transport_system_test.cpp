// The transport against real OpenSSH sshd: a jumphost namespace and a sandbox namespace
// reachable only through it (tests/system/transport_world.h).
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "harness/common/subprocess.h"
#include "harness/transport/host_key.h"
#include "harness/transport/transport.h"
#include "tests/support/test_support.h"
#include "tests/system/transport_world.h"

using namespace isoharness;
using namespace isoharness::transport;
using namespace std::chrono_literals;

namespace {

test::TransportWorld& world() {
  static std::unique_ptr<test::TransportWorld> w = [] {
    test::require_system({"ip", "nft", "sshd", "ssh", "ssh-keygen", "ssh-agent", "ssh-add"});
    return test::TransportWorld::create();
  }();
  return *w;
}

std::unique_ptr<JumpConnection> connect_jump(HostKeyPolicy policy = {}) {
  auto jump = JumpConnection::connect(world().route.jump, world().credentials, policy, 10s);
  if (!jump) FAIL("jump connect failed: " << jump.error().message);
  return std::move(*jump);
}

std::unique_ptr<SandboxSession> open_sandbox(JumpConnection& jump) {
  auto s = jump.open(world().route.sandbox, 10s);
  if (!s) FAIL("sandbox open failed: " << s.error().message);
  return std::move(*s);
}

std::string fingerprint_of(const std::string& line) {
  auto k = parse_public_key(line);
  REQUIRE(k.has_value());
  return k->fingerprint();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

}  // namespace

TEST_CASE("exec through the jumphost: stdout, stderr, exit code, quoting", "[system][transport]") {
  auto jump = connect_jump();
  auto s = open_sandbox(*jump);

  auto r = s->exec({"sh", "-c", "echo out; echo err >&2; exit 3"}, 10s, 1 << 20);
  REQUIRE(r.has_value());
  CHECK(r->out == "out\n");
  CHECK(r->err == "err\n");
  CHECK(r->exit_code == 3);
  CHECK_FALSE(r->timed_out);
  CHECK_FALSE(r->out_truncated);

  // The command runs in the sandbox's network namespace, not the jumphost's.
  auto addr = s->exec({"ip", "-o", "-4", "addr", "show"}, 10s, 1 << 20);
  REQUIRE(addr.has_value());
  CHECK_THAT(addr->out, Catch::Contains(world().route.sandbox.host + "/30"));
  CHECK_THAT(addr->out, !Catch::Contains(world().route.jump.host + "/30"));

  // Every argv word arrives intact through sshd's login shell.
  std::vector<std::string> words = {"two words", "it's", "$HOME", "`id`", "a;b", "", "new\nline"};
  std::vector<std::string> argv = {"printf", "%s|"};
  argv.insert(argv.end(), words.begin(), words.end());
  auto q = s->exec(argv, 10s, 1 << 20);
  REQUIRE(q.has_value());
  CHECK(q->out == "two words|it's|$HOME|`id`|a;b||new\nline|");
  CHECK(q->exit_code == 0);

  auto sig = s->exec({"sh", "-c", "kill -KILL $$"}, 10s, 1 << 20);
  REQUIRE(sig.has_value());
  CHECK(sig->exit_code == -1);
  CHECK(sig->exit_signal == "KILL");
}

TEST_CASE("exec holds its deadline and the session stays usable", "[system][transport]") {
  auto jump = connect_jump();
  auto s = open_sandbox(*jump);
  auto start = std::chrono::steady_clock::now();
  auto r = s->exec({"sleep", "30"}, 1s, 1 << 20);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(r.has_value());
  CHECK(r->timed_out);
  CHECK(r->exit_code == -1);
  CHECK(took < 5.0);
  CHECK(r->seconds >= 0.9);
  auto again = s->exec({"echo", "still here"}, 10s, 1 << 20);
  REQUIRE(again.has_value());
  CHECK(again->out == "still here\n");
}

TEST_CASE("exec caps what it keeps of a large output", "[system][transport]") {
  auto jump = connect_jump();
  auto s = open_sandbox(*jump);
  auto r = s->exec({"head", "-c", "20000000", "/dev/zero"}, 30s, 64 * 1024);
  REQUIRE(r.has_value());
  CHECK(r->out.size() == 64 * 1024);
  CHECK(r->out_truncated);
  CHECK_FALSE(r->err_truncated);
  CHECK_FALSE(r->timed_out);
  auto endless = s->exec({"yes"}, 30s, 1000);
  REQUIRE(endless.has_value());
  CHECK(endless->out.size() == 1000);
  CHECK(endless->out_truncated);
  CHECK(endless->seconds < 10);
  // Stderr past the cap is dropped and the command still reports its exit status (a loud
  // login shell must not hide it); an endless stderr ends at the deadline.
  auto err = s->exec({"sh", "-c", "head -c 50000 /dev/zero >&2; echo done; exit 3"}, 10s, 100);
  REQUIRE(err.has_value());
  CHECK(err->err.size() == 100);
  CHECK(err->err_truncated);
  CHECK(err->out == "done\n");
  CHECK(err->exit_code == 3);
  CHECK_FALSE(err->timed_out);
  auto loud = s->exec({"sh", "-c", "yes >&2"}, 2s, 100);
  REQUIRE(loud.has_value());
  CHECK(loud->err.size() == 100);
  CHECK(loud->timed_out);
  auto again = s->exec({"echo", "ok"}, 10s, 1 << 20);
  REQUIRE(again.has_value());
  CHECK(again->out == "ok\n");
}

TEST_CASE("upload over SFTP is verified and keeps the mode", "[system][transport]") {
  auto jump = connect_jump();
  auto s = open_sandbox(*jump);
  std::string local = world().dir + "/probe.bin";
  std::string content = random_bytes(3 * 1024 * 1024 + 17, 7);
  std::ofstream(local, std::ios::binary) << content;
  std::string remote = world().dir + "/remote/isoprobe";  // the sandbox shares this machine's files
  auto up = s->upload(local, remote, 0755, 60s);
  REQUIRE(up.has_value());
  CHECK(up->bytes == content.size());
  CHECK(up->sha256.size() == 64);
  CHECK(read_file(remote) == content);
  struct stat st {};
  REQUIRE(::stat(remote.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0755);
  auto sum = run_command({"sha256sum", remote});
  REQUIRE(sum.has_value());
  CHECK(sum->out.substr(0, 64) == up->sha256);

  SECTION("a whole bundle directory") {
    namespace fs = std::filesystem;
    std::string bundle = world().dir + "/bundle";
    fs::create_directories(bundle + "/lib");
    std::ofstream(bundle + "/isoprobe") << "#!/bin/sh\necho probe\n";
    ::chmod((bundle + "/isoprobe").c_str(), 0750);
    std::ofstream(bundle + "/lib/data.json") << "{\"a\": 1}\n";
    fs::create_symlink("/etc/passwd", bundle + "/link");
    auto all = s->upload_dir(bundle, world().dir + "/remote/bundle", 30s);
    REQUIRE(all.has_value());
    CHECK(all->size() == 2);
    CHECK(read_file(world().dir + "/remote/bundle/lib/data.json") == "{\"a\": 1}\n");
    CHECK_FALSE(fs::exists(fs::symlink_status(world().dir + "/remote/bundle/link")));
    auto run = s->exec({world().dir + "/remote/bundle/isoprobe"}, 10s, 1024);
    REQUIRE(run.has_value());
    CHECK(run->out == "probe\n");
  }
  SECTION("checked by size instead of read back") {
    const std::string other = world().dir + "/remote/isoprobe-sized";
    auto sized = s->upload(local, other, 0700, 60s, transport::UploadCheck::size);
    REQUIRE(sized.has_value());
    CHECK(sized->checked == transport::UploadCheck::size);
    CHECK(sized->bytes == content.size());
    CHECK(sized->sha256 == up->sha256);  // the local file's digest, for the caller to compare
    CHECK(read_file(other) == content);
    // A device that refuses every write: the error names the file and the byte.
    auto full = s->upload(local, "/dev/full", 0600, 10s, transport::UploadCheck::size);
    REQUIRE_FALSE(full.has_value());
    CHECK_THAT(full.error().message, Catch::Contains("writing /dev/full at byte"));
  }
  SECTION("errors name the file") {
    auto missing = s->upload(world().dir + "/nope", remote, 0644, 10s);
    REQUIRE_FALSE(missing.has_value());
    CHECK_THAT(missing.error().message, Catch::Contains("nope"));
    auto bad_dir = s->upload(local, world().dir + "/remote/no/such/dir/x", 0644, 10s);
    REQUIRE_FALSE(bad_dir.has_value());
    CHECK_THAT(bad_dir.error().message, Catch::Contains("creating") && Catch::Contains("no/such/dir/x"));
  }
}

// A sandbox whose sshd serves no SFTP subsystem: the same uploads go over exec channels (a
// constant `sh` script, the bytes on stdin), checked the same ways, and say so.
TEST_CASE("upload to an sshd without SFTP goes over exec, verified, and says so", "[system][transport]") {
  test::require_system({"ip", "nft", "sshd", "ssh", "ssh-keygen", "ssh-agent", "ssh-add"});
  auto bare = test::TransportWorld::create({.sftp = false});
  auto jump = JumpConnection::connect(bare->route.jump, bare->credentials, {}, 10s);
  REQUIRE(jump);
  auto s = (*jump)->open(bare->route.sandbox, 10s);
  REQUIRE(s);
  const std::string local = bare->dir + "/agent.bin";
  const std::string content = random_bytes(2 * 1024 * 1024 + 5, 11);
  std::ofstream(local, std::ios::binary) << content;
  const std::string remote = bare->dir + "/remote/sub/isoprobe";  // its directory is made too
  for (auto check : {UploadCheck::read_back, UploadCheck::size}) {
    auto up = (*s)->upload(local, remote, 0750, 60s, check);
    REQUIRE(up.has_value());
    CHECK(up->via == UploadVia::exec);
    CHECK(up->checked == check);
    CHECK(up->bytes == content.size());
    CHECK(read_file(remote) == content);
    struct stat st {};
    REQUIRE(::stat(remote.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0750);
    CHECK_FALSE(std::filesystem::exists(remote + ".part"));
    auto sum = run_command({"sha256sum", remote});
    REQUIRE(sum.has_value());
    CHECK(sum->out.substr(0, 64) == up->sha256);
  }
  SECTION("a whole directory") {
    const std::string bundle = bare->dir + "/bundle";
    std::filesystem::create_directories(bundle + "/lib");
    std::ofstream(bundle + "/isoprobe") << "#!/bin/sh\necho probe\n";
    ::chmod((bundle + "/isoprobe").c_str(), 0755);
    std::ofstream(bundle + "/lib/data.json") << "{}\n";
    auto all = (*s)->upload_dir(bundle, bare->dir + "/remote/bundle", 30s, UploadCheck::size);
    REQUIRE(all.has_value());
    CHECK(all->size() == 2);
    for (const auto& f : *all) CHECK(f.via == UploadVia::exec);
    auto run = (*s)->exec({bare->dir + "/remote/bundle/isoprobe"}, 10s, 1024);
    REQUIRE(run.has_value());
    CHECK(run->out == "probe\n");
  }
  SECTION("a relative path lands where SFTP would put it: in the login's working directory") {
    const std::string rel = "isoharness-exec-rel/agent";  // as run's .isoprobe/isoprobe
    auto up = (*s)->upload(local, rel, 0700, 60s, UploadCheck::size);
    REQUIRE(up.has_value());
    CHECK(up->via == UploadVia::exec);
    auto held = (*s)->exec({"sh", "-c", "wc -c < \"$0\"; rm -rf isoharness-exec-rel", rel}, 10s, 1024);
    REQUIRE(held.has_value());
    CHECK(held->out.find(std::to_string(content.size())) != std::string::npos);
    auto dash = (*s)->upload(local, "-rf", 0700, 10s, UploadCheck::size);
    REQUIRE_FALSE(dash.has_value());
    CHECK_THAT(dash.error().message, Catch::Contains("bad remote path"));
  }
  SECTION("a place that cannot be written: the error says SFTP is missing and why exec failed") {
    auto bad = (*s)->upload(local, "/proc/isoharness-no/x", 0644, 10s, UploadCheck::size);
    REQUIRE_FALSE(bad.has_value());
    CHECK_THAT(bad.error().message, Catch::Contains("cannot start SFTP") && Catch::Contains("over exec") &&
                                        Catch::Contains("did not verify"));
  }
}

namespace {

// An agent's directory as `run` uploads it: the unpacker, a 2 MiB agent (half random, half
// text: compressible, but not trivially) and a small file. Returns the agent's content.
std::string make_agent_dir(const std::string& dir, const std::string& unxz) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  fs::copy_file(unxz, dir + "/isoprobe-unxz", fs::copy_options::overwrite_existing);
  std::string content = random_bytes(std::size_t{512} * 1024, 5);
  for (int i = 0; content.size() < std::size_t{2} * 1024 * 1024; ++i)
    content += "line " + std::to_string(i) + " of the agent\n";
  std::ofstream(dir + "/isoprobe", std::ios::binary) << content;
  ::chmod((dir + "/isoprobe").c_str(), 0755);
  std::ofstream(dir + "/small.txt") << "small\n";
  return content;
}

// One file of make_agent_dir's as a world with `o` must have received it.
void check_uploaded(const UploadedFile& f, const std::string& remote, const test::TransportWorld::Options& o,
                    const std::string& content, const std::string& unxz) {
  if (f.remote_path != remote + "/isoprobe") {  // small: as is, by SFTP where there is SFTP
    CHECK(f.via == (o.sftp ? UploadVia::sftp : UploadVia::exec));
    CHECK(f.compressed_bytes == 0);
    return;
  }
  // With head: the unpacker and the stream in one exec channel. Without: the way the
  // unpacker went on its own.
  CHECK(f.via == (o.head || !o.sftp ? UploadVia::exec : UploadVia::sftp));
  CHECK(f.bytes == content.size());
  CHECK(f.compressed_bytes > 0);
  CHECK(f.compressed_bytes < content.size() / 2);
  CHECK(f.unpacker_bytes == std::filesystem::file_size(unxz));
  CHECK(transport::upload_record(f)["packing"] == "xz");
  auto sum = run_command({"sha256sum", remote + "/isoprobe"});
  REQUIRE(sum.has_value());
  CHECK(sum->out.substr(0, 64) == f.sha256);
  CHECK(read_file(remote + "/isoprobe") == content);
  struct stat st {};
  REQUIRE(::stat((remote + "/isoprobe").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0755);
  CHECK_FALSE(std::filesystem::exists(remote + "/isoprobe.part"));
}

}  // namespace

// The agent's directory as `run` uploads it: with the unpacker (probes/launcher/unxz_main.c)
// beside it, a large file goes xz-compressed and is unpacked in the sandbox, whether the
// sandbox serves SFTP or not; a corrupt stream leaves nothing behind. A sandbox without
// `head` cannot take the unpacker in front of the stream: it goes on its own first (SFTP
// where there is SFTP), then the stream, and the file is still packed and whole.
TEST_CASE("upload_dir with the unpacker sends large files packed, unpacked whole", "[system][transport]") {
  namespace fs = std::filesystem;
  const std::string unxz = test::binary_dir() + "/probes/isoprobe-posture/isoprobe-unxz";
  REQUIRE(fs::exists(unxz));
  for (const test::TransportWorld::Options o :
       {test::TransportWorld::Options{}, {.sftp = false}, {.head = false}, {.sftp = false, .head = false}}) {
    INFO("sandbox sshd with SFTP: " << o.sftp << ", with head: " << o.head);
    auto own = o.sftp && o.head ? nullptr : test::TransportWorld::create(o);
    test::TransportWorld& w = own ? *own : world();
    auto jump = JumpConnection::connect(w.route.jump, w.credentials, {}, 10s);
    REQUIRE(jump);
    auto s = (*jump)->open(w.route.sandbox, 10s);
    REQUIRE(s);
    auto head = (*s)->exec({"sh", "-c", "echo x | head -c 1"}, 10s, 4096);
    REQUIRE(head.has_value());
    CHECK((head->exit_code == 0) == o.head);  // the world is what the case says
    const std::string dir = w.dir + "/agent-dir";
    const std::string content = make_agent_dir(dir, unxz);
    // What a run packs ahead of its uploads: the large file, once the unpacker is beside it.
    CHECK(transport::prepack_dir(dir) == 1);
    fs::create_directories(w.dir + "/no-unpacker");
    std::ofstream(w.dir + "/no-unpacker/isoprobe", std::ios::binary) << content;
    CHECK(transport::prepack_dir(w.dir + "/no-unpacker") == 0);
    const std::string remote = w.dir + "/remote/packed";
    auto all = (*s)->upload_dir(dir, remote, 60s, UploadCheck::size);
    INFO((all ? "" : all.error().message));
    REQUIRE(all.has_value());
    REQUIRE(all->size() == 2);  // the unpacker is not listed
    for (const auto& f : *all) check_uploaded(f, remote, o, content, unxz);
    CHECK(read_file(remote + "/small.txt") == "small\n");
    // The unpacker refuses a cut stream and leaves no file.
    auto cut = (*s)->exec_with_input({remote + "/isoprobe-unxz", remote + "/cut", "644"},
                                     "\xfd"
                                     "7zXZ",
                                     10s, 4096);
    REQUIRE(cut.has_value());
    CHECK(cut->exit_code == 1);
    CHECK_FALSE(fs::exists(remote + "/cut"));
    CHECK_FALSE(fs::exists(remote + "/cut.part"));
    // Read back: nothing is packed (the bytes cross twice anyway).
    auto back = (*s)->upload_dir(dir, w.dir + "/remote/plain", 60s, UploadCheck::read_back);
    REQUIRE(back.has_value());
    CHECK(back->size() == 3);
    for (const auto& f : *back) CHECK(f.compressed_bytes == 0);
  }
}

TEST_CASE("host keys: unknown and changed keys are refused, accept_new records", "[system][transport]") {
  const auto& route = world().route;
  std::string jump_fp = fingerprint_of(route.jump.host_key);

  SECTION("unknown jumphost key is refused, with its fingerprint") {
    auto ep = route.jump;
    ep.host_key.clear();
    auto r = JumpConnection::connect(ep, world().credentials, {}, 10s);
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::Contains("not pinned") && Catch::Contains(jump_fp));
  }
  SECTION("changed jumphost key is refused, even with accept_new") {
    auto ep = route.jump;
    ep.host_key = world().stranger_key;
    for (bool accept : {false, true}) {
      auto r = JumpConnection::connect(ep, world().credentials, HostKeyPolicy{accept, ""}, 10s);
      REQUIRE_FALSE(r.has_value());
      CHECK_THAT(r.error().message, Catch::Contains("HOST KEY CHANGED") && Catch::Contains(jump_fp) &&
                                        Catch::Contains(fingerprint_of(world().stranger_key)));
    }
  }
  SECTION("accept_new accepts an unpinned key and records it") {
    auto ep = route.jump;
    ep.host_key.clear();
    auto jump = JumpConnection::connect(ep, world().credentials, HostKeyPolicy{true, ""}, 10s);
    REQUIRE(jump.has_value());
    auto sb = route.sandbox;
    sb.host_key.clear();
    auto s = (*jump)->open(sb, 10s);
    REQUIRE(s.has_value());
    REQUIRE((*s)->accepted_key().has_value());
    CHECK((*s)->accepted_key()->key_line == route.sandbox.host_key);
    auto accepted = (*jump)->accepted_keys();
    REQUIRE(accepted.size() == 2);
    CHECK(accepted[0].host == route.jump.host);
    CHECK(accepted[0].port == 22);
    CHECK(accepted[0].key_line == route.jump.host_key);
    CHECK(accepted[0].fingerprint == jump_fp);
    CHECK(accepted[1].key_line == route.sandbox.host_key);
    CHECK(accepted[1].port == 2222);
  }
  SECTION("a pinned key accepts nothing new") {
    auto jump = connect_jump(HostKeyPolicy{true, ""});
    auto s = open_sandbox(*jump);
    CHECK_FALSE(s->accepted_key().has_value());
    CHECK(jump->accepted_keys().empty());
  }
  SECTION("the sandbox's changed key is refused through the jumphost") {
    auto jump = connect_jump(HostKeyPolicy{true, ""});
    auto sb = route.sandbox;
    sb.host_key = world().stranger_key;
    auto r = jump->open(sb, 10s);
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::Contains("sandbox") && Catch::Contains("HOST KEY CHANGED") &&
                                      Catch::Contains(fingerprint_of(route.sandbox.host_key)));
    auto unknown = route.sandbox;
    unknown.host_key.clear();
    auto strict = connect_jump();
    auto u = strict->open(unknown, 10s);
    REQUIRE_FALSE(u.has_value());
    CHECK_THAT(u.error().message, Catch::Contains("not pinned"));
    // The jump connection survives refused sandboxes.
    auto ok = open_sandbox(*strict);
    CHECK(ok->exec({"true"}, 10s, 64)->exit_code == 0);
  }
  SECTION("a known_hosts file pins the jumphost") {
    std::string kh = world().dir + "/known_hosts_jump";
    std::ofstream(kh) << "# pinned\n" << route.jump.host << " " << route.jump.host_key << "\n";
    auto ep = route.jump;
    ep.host_key.clear();
    auto r = JumpConnection::connect(ep, world().credentials, HostKeyPolicy{false, kh}, 10s);
    REQUIRE(r.has_value());
    CHECK((*r)->accepted_keys().empty());
    std::ofstream(kh) << route.jump.host << " " << world().stranger_key << "\n";
    auto changed = JumpConnection::connect(ep, world().credentials, HostKeyPolicy{true, kh}, 10s);
    REQUIRE_FALSE(changed.has_value());
    CHECK_THAT(changed.error().message, Catch::Contains("HOST KEY CHANGED"));
  }
}

TEST_CASE("authentication: key file, agent, and a wrong key", "[system][transport]") {
  SECTION("the agent") {
    std::string sock = world().start_agent();
    Credentials agent{"", "", true, sock};
    auto jump = JumpConnection::connect(world().route.jump, agent, {}, 10s);
    if (!jump) FAIL(jump.error().message);
    auto s = (*jump)->open(world().route.sandbox, 10s);
    if (!s) FAIL(s.error().message);
    CHECK((*s)->exec({"echo", "agent"}, 10s, 64)->out == "agent\n");
  }
  SECTION("a key the servers do not know") {
    Credentials stranger{world().dir + "/stranger", "", false};
    auto jump = JumpConnection::connect(world().route.jump, stranger, {}, 10s);
    REQUIRE_FALSE(jump.has_value());
    CHECK_THAT(jump.error().message,
               Catch::Contains("key authentication as 'root'") && Catch::Contains("stranger"));
  }
  SECTION("an agent that is not there") {
    Credentials agent{"", "", true, world().dir + "/no-agent.sock"};
    auto jump = JumpConnection::connect(world().route.jump, agent, {}, 10s);
    REQUIRE_FALSE(jump.has_value());
    CHECK_THAT(jump.error().message,
               Catch::Contains("cannot reach the ssh agent") && Catch::Contains("no-agent.sock"));
  }
  SECTION("an RSA key is refused with a hint") {
    std::string rsa = world().dir + "/id_rsa";
    REQUIRE(run_command({"ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", rsa})->ok());
    // Authorised on the servers: the only reason left to refuse it is the SHA-1 signature.
    std::ofstream(world().dir + "/authorized_keys", std::ios::app) << read_file(rsa + ".pub");
    auto ssh = run_command(
        {"ssh", "-F", world().openssh_config, "-i", rsa, "-o", "IdentitiesOnly=yes", "-J",
         "root@" + world().route.jump.host, "-p", "2222", "root@" + world().route.sandbox.host, "true"},
        RunOptions{.deadline = 30s});
    REQUIRE(ssh.has_value());
    INFO("OpenSSH with the same RSA key: " << ssh->describe());
    CHECK(ssh->ok());  // OpenSSH signs with rsa-sha2 and gets in
    auto rsa_fp = run_command({"ssh-keygen", "-l", "-E", "sha256", "-f", rsa + ".pub"});
    REQUIRE(rsa_fp.has_value());
    std::string fp = rsa_fp->out.substr(rsa_fp->out.find("SHA256:"), 50);
    CHECK_THAT(read_file(world().dir + "/sshd_2222.log"), Catch::Contains("RSA " + fp));
    auto jump = JumpConnection::connect(world().route.jump, Credentials{rsa, "", false, ""}, {}, 10s);
    REQUIRE_FALSE(jump.has_value());
    CHECK_THAT(jump.error().message, Catch::Contains("use an ed25519 key"));
  }
  SECTION("a missing key file") {
    Credentials none{world().dir + "/missing", "", false};
    auto jump = JumpConnection::connect(world().route.jump, none, {}, 10s);
    REQUIRE_FALSE(jump.has_value());
    CHECK_THAT(jump.error().message, Catch::Contains("cannot read private key"));
  }
}

TEST_CASE("unreachable places fail fast with a reason", "[system][transport]") {
  auto jump = connect_jump();
  auto closed = world().route.sandbox;
  closed.port = 2223;
  auto r = jump->open(closed, 10s);
  REQUIRE_FALSE(r.has_value());
  CHECK_THAT(r.error().message, Catch::Contains("refused a channel") && Catch::Contains(":2223"));
  CHECK(jump->alive());

  auto no_sshd = world().route.jump;
  no_sshd.port = 2200;
  auto j = JumpConnection::connect(no_sshd, world().credentials, {}, 5s);
  REQUIRE_FALSE(j.has_value());
  CHECK_THAT(j.error().message, Catch::Contains("cannot connect"));
}

// What is wrong with an exec that should print tag, a newline and 200000 'x' and exit 0;
// empty when nothing is.
static std::string wrong_zero_stream(const transport::ExecResult& r, const std::string& tag) {
  const std::size_t want = tag.size() + 1 + 200000;
  std::string wrong;
  if (r.exit_code != 0) wrong += fmt::format("exit {} (signal '{}'); ", r.exit_code, r.exit_signal);
  if (r.timed_out) wrong += "timed out; ";
  if (r.out.size() != want) wrong += fmt::format("{} bytes of stdout, not {}; ", r.out.size(), want);
  if (r.out.compare(0, tag.size() + 1, tag + "\n") != 0)
    wrong += "stdout starts '" + r.out.substr(0, 16) + "', not the tag; ";
  const auto bad = r.out.find_first_not_of('x', std::min(r.out.size(), tag.size() + 1));
  if (bad != std::string::npos) wrong += fmt::format("byte {} is {:#04x}, not 'x'; ", bad, r.out[bad]);
  if (!wrong.empty()) wrong += fmt::format("after {:.1f} s, stderr '{}'", r.seconds, r.err.substr(0, 200));
  return wrong;
}

namespace {

// What 16 sandbox sessions over one jump connection, driven by 4 threads, saw: every exec
// that went wrong (which thread, session and round, and what came back), the good ones,
// and the jumphost sshd's established connections while all 16 were open.
struct SixteenSessions {
  std::string failures;
  int good = 0;
  Expected<RunResult> established = make_error("not counted");
};

SixteenSessions sixteen_sessions(JumpConnection& jump) {
  constexpr int kThreads = 4, kPerThread = 4;
  std::atomic<int> good{0};
  std::vector<std::string> failures(kThreads);
  std::atomic<int> opened{0};
  std::atomic<bool> counted{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::unique_ptr<SandboxSession>> mine;
      for (int i = 0; i < kPerThread; ++i) {
        auto s = jump.open(world().route.sandbox, 20s);
        if (!s) {
          failures[t] += fmt::format("thread {} session {}: not opened: {}\n", t, i, s.error().message);
          ++opened;
          return;
        }
        mine.push_back(std::move(*s));
      }
      // Hold all 16 open at once while the connections are counted.
      ++opened;
      for (int wait = 0; wait < 600 && !counted; ++wait) std::this_thread::sleep_for(50ms);
      for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < kPerThread; ++i) {
          std::string tag = std::to_string(t * 100 + i * 10 + round);
          // 200 KB each: enough to interleave channels and exercise window handling.
          auto r = mine[i]->exec({"sh", "-c", "echo " + tag + "; head -c 200000 /dev/zero | tr '\\0' x"}, 30s,
                                 1 << 20);
          const std::string wrong = r ? wrong_zero_stream(*r, tag) : "exec failed: " + r.error().message;
          if (wrong.empty())
            ++good;
          else
            failures[t] += fmt::format("thread {} session {} round {}: {}\n", t, i, round, wrong);
        }
      }
    });
  }
  for (int wait = 0; wait < 600 && opened < kThreads; ++wait) std::this_thread::sleep_for(50ms);
  SixteenSessions seen;
  seen.established = run_command(
      {"ip", "netns", "exec", world().ns_jump, "ss", "-Htn", "state", "established", "sport", "=", ":22"});
  counted = true;
  for (auto& th : threads) th.join();
  for (const auto& f : failures) seen.failures += f;
  seen.good = good;
  return seen;
}

}  // namespace

TEST_CASE("16 sandbox sessions over one jumphost connection from 4 threads", "[system][transport]") {
  auto jump = connect_jump();
  const SixteenSessions seen = sixteen_sessions(*jump);
  CHECK(seen.failures == "");  // every failed exec, one line each, with what was wrong
  CHECK(seen.good == 48);
  REQUIRE(seen.established.has_value());
  INFO("established connections to the jumphost's sshd:\n" << seen.established->out);
  // Exactly one TCP connection reaches the jumphost's sshd, carrying all 16 sessions.
  CHECK(std::count(seen.established->out.begin(), seen.established->out.end(), '\n') == 1);
}

// The same, many times over in one world (ISOHARNESS_REPEAT times, at most 500; 20 when
// unset), for chasing a rare failure under load; hidden from the default run.
TEST_CASE("16 sandbox sessions over one jumphost connection, repeated", "[.][stress][transport]") {
  const char* env = std::getenv("ISOHARNESS_REPEAT");
  const int repeat = std::clamp(env ? std::atoi(env) : 20, 1, 500);
  int bad_rounds = 0;
  for (int i = 0; i < repeat; ++i) {
    auto jump = connect_jump();
    const SixteenSessions seen = sixteen_sessions(*jump);
    if (!seen.failures.empty() || seen.good != 48) {
      ++bad_rounds;
      std::fprintf(stderr, "repetition %d: %d of 48 good\n%s", i, seen.good, seen.failures.c_str());
    }
  }
  std::fprintf(stderr, "%d of %d repetitions had a failed exec\n", bad_rounds, repeat);
  CHECK(bad_rounds == 0);
}

TEST_CASE("OpenSSH ssh -J sees the same sandbox", "[system][transport]") {
  auto jump = connect_jump();
  auto s = open_sandbox(*jump);
  for (const auto& cmd : std::vector<std::vector<std::string>>{
           {"uname", "-r"}, {"cat", "/proc/sys/kernel/hostname"}, {"ip", "-o", "-4", "addr", "show"}}) {
    auto ours = s->exec(cmd, 10s, 1 << 20);
    REQUIRE(ours.has_value());
    auto theirs = run_command(world().openssh_argv(cmd), RunOptions{.deadline = 20s});
    REQUIRE(theirs.has_value());
    INFO("ssh -J stderr: " << theirs->err);
    REQUIRE(theirs->ok());
    CHECK(ours->out == theirs->out);
  }
}

TEST_CASE("deadlines hold when the network stalls", "[system][transport]") {
  auto jump = connect_jump();
  auto s = open_sandbox(*jump);
  world().set_jump_stalled(true);
  struct Restore {
    ~Restore() { world().set_jump_stalled(false); }
  } restore;
  auto start = std::chrono::steady_clock::now();
  auto r = s->exec({"echo", "never"}, 2s, 1024);
  auto opened = jump->open(world().route.sandbox, 2s);
  auto fresh = JumpConnection::connect(world().route.jump, world().credentials, {}, 2s);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // exec: either cut off at its deadline or refused as failed; never a hang.
  if (r.has_value()) CHECK(r->timed_out);
  REQUIRE_FALSE(opened.has_value());
  CHECK_THAT(opened.error().message, Catch::Contains("timed out"));
  REQUIRE_FALSE(fresh.has_value());
  CHECK_THAT(fresh.error().message, Catch::Contains("cannot connect") && Catch::Contains("timed out"));
  CHECK(took < 2 + 2 + 2 + 2 + 3);  // three 2 s deadlines, two close graces, slack
}

TEST_CASE("a dropped jumphost connection fails every user clearly", "[system][transport]") {
  auto jump = connect_jump();
  auto s = open_sandbox(*jump);
  REQUIRE(s->exec({"true"}, 10s, 64)->exit_code == 0);
  world().kill_jump_connections();
  for (int i = 0; i < 100 && jump->alive(); ++i) std::this_thread::sleep_for(50ms);
  CHECK_FALSE(jump->alive());
  auto r = s->exec({"true"}, 5s, 64);
  CHECK_FALSE(r.has_value());
  auto again = jump->open(world().route.sandbox, 5s);
  REQUIRE_FALSE(again.has_value());
  CHECK_THAT(again.error().message, Catch::Contains("jumphost connection failed"));
  // A new connection works.
  auto fresh = connect_jump();
  CHECK(open_sandbox(*fresh)->exec({"echo", "back"}, 10s, 64)->out == "back\n");
}
