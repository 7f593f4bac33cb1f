// hostPath sources bound by descriptor (harness/deploy/local/host_path_bind.h), with real
// mounts: what is bound is the directory that was opened, a symlink anywhere on the way
// refuses the control, a link swapped in after the bind changes nothing the runtime sees,
// and unbinding leaves the host directory's files where they were. Needs root.
#include "harness/deploy/local/host_path_bind.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "harness/common/error.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
using namespace isoharness::deploy::local;
namespace fs = std::filesystem;

namespace {

// The scratch directory, with whatever a case bound under it unmounted first, also when
// the case fails: its removal must never go down into a bound directory.
struct BindScratch {
  test::local::ScratchDir dir;
  std::string bundle = dir.path + "/bundle";
  std::string hosts = dir.path + "/hosts";
  BindScratch() {
    test::require_system({});
    fs::create_directories(bundle);
    fs::create_directories(hosts);
  }
  ~BindScratch() { unmount_all_under(dir.path); }
};

HostPathMount host_path(const std::string& path, bool create = false) {
  return HostPathMount{"node", path, "/node", false, create};
}

ino_t inode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_ino;
}

std::string refusal(const HostPathMount& h, const std::string& bundle) {
  try {
    bind_host_path(h, bundle, 0);
  } catch (const InfraError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a host path is bound by descriptor at a staging point that shows the same directory",
          "[system][escape]") {
  BindScratch s;
  const std::string src = s.hosts + "/data";
  fs::create_directories(src);
  std::ofstream(src + "/marker") << "host";
  const std::string staged = bind_host_path(host_path(src), s.bundle, 0);
  CHECK(staged == host_path_staging_dir(s.bundle) + "/0");
  CHECK(inode_of(staged) == inode_of(src));
  CHECK(test::read_text(staged + "/marker") == "host");
  CHECK(mount_points_under(s.bundle) == std::vector<std::string>{staged});

  SECTION("a link swapped in for the source afterwards changes nothing the staging point shows") {
    fs::rename(src, s.hosts + "/moved");
    fs::create_directories(s.hosts + "/elsewhere");
    fs::create_directory_symlink(s.hosts + "/elsewhere", src);
    CHECK(inode_of(staged) == inode_of(s.hosts + "/moved"));
    CHECK(test::read_text(staged + "/marker") == "host");
  }
  SECTION("unbinding, then removing the bundle, leaves the host directory's files") {
    CHECK(unmount_all_under(s.bundle).empty());
    CHECK(mount_points_under(s.bundle).empty());
    fs::remove_all(s.bundle);
    CHECK(test::read_text(src + "/marker") == "host");
  }
}

TEST_CASE("a host path reached through a symlink, at any step, is refused naming the step",
          "[system][escape]") {
  BindScratch s;
  fs::create_directories(s.hosts + "/real/inner");
  fs::create_directory_symlink(s.hosts + "/real", s.hosts + "/link");
  for (const std::string& path : {s.hosts + "/link/inner", s.hosts + "/link"}) {
    INFO(path);
    CHECK_THAT(refusal(host_path(path), s.bundle),
               Catch::Contains("control hostPath " + path) && Catch::Contains("link is a symlink"));
  }
  // DirectoryOrCreate does not create through a link either.
  CHECK_THAT(refusal(host_path(s.hosts + "/link/new", true), s.bundle), Catch::Contains("symlink"));
  CHECK_FALSE(fs::exists(s.hosts + "/real/new"));
  CHECK(mount_points_under(s.bundle).empty());
}

TEST_CASE("Directory needs the host path to exist; DirectoryOrCreate makes each missing step",
          "[system][escape]") {
  BindScratch s;
  CHECK_THAT(refusal(host_path(s.hosts + "/a/b"), s.bundle), Catch::Contains("a does not exist"));
  CHECK_FALSE(fs::exists(s.hosts + "/a"));
  const std::string staged = bind_host_path(host_path(s.hosts + "/a/b", true), s.bundle, 0);
  CHECK(fs::is_directory(s.hosts + "/a/b"));
  CHECK(inode_of(staged) == inode_of(s.hosts + "/a/b"));
  std::ofstream(s.hosts + "/file") << "x";
  CHECK_THAT(refusal(host_path(s.hosts + "/file"), s.bundle), Catch::Contains("not a directory"));
}

TEST_CASE("mount_points_under never names the whole tree", "[system][escape]") {
  CHECK(mount_points_under("").empty());
  CHECK(mount_points_under("/").empty());
  CHECK(mount_points_under("relative/dir").empty());
  CHECK_FALSE(mount_points_under("/proc").empty());
}
