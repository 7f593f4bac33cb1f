#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "version") == 0) {
    std::printf("isoprobe 0.1.0\n");
    return 0;
  }
  std::fprintf(stderr, "usage: isoprobe version\n");
  return 2;
}
