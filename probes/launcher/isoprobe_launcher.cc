// The bundle's entry point, linked fully static so it runs in an image with no libc:
// it finds its own directory from /proc/self/exe (or argv[0]) and execs
//   <dir>/lib/ld-linux-x86-64.so.2 --inhibit-cache --library-path <dir>/lib
//       --argv0 <argv[0]> <dir>/lib/isoprobe.bin ARGS...
// so isoprobe.bin and every library it needs come from the bundle, never the image.
// It also exports ISOPROBE_BUNDLE_DIR=<dir> (for code that wants to re-run isoprobe:
// /proc/self/exe inside isoprobe.bin is the loader, not isoprobe).
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  char self[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string exe;
  if (n > 0) {
    exe.assign(self, static_cast<std::size_t>(n));
  } else if (argc > 0 && std::strchr(argv[0], '/')) {
    exe = argv[0];  // no /proc: trust the path we were started by
  } else {
    std::fprintf(stderr,
                 "isoprobe: cannot find the bundle directory (no /proc/self/exe, argv[0] has no '/')\n");
    return 127;
  }
  std::size_t slash = exe.rfind('/');
  std::string dir = slash == 0 ? "/" : exe.substr(0, slash);
  std::string lib = (dir == "/" ? "" : dir) + "/lib";
  std::string loader = lib + "/ld-linux-x86-64.so.2";
  std::string program = lib + "/isoprobe.bin";
  ::setenv("ISOPROBE_BUNDLE_DIR", dir.c_str(), 1);

  std::vector<std::string> args = {loader,    "--inhibit-cache",        "--library-path", lib,
                                   "--argv0", argc > 0 ? argv[0] : exe, program};
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  std::vector<char*> cargs;
  cargs.reserve(args.size() + 1);
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  ::execv(loader.c_str(), cargs.data());
  std::fprintf(stderr, "isoprobe: cannot exec the bundle's loader %s: %s\n", loader.c_str(),
               std::strerror(errno));
  return 127;
}
