/* isoprobe-unxz OUT MODE: reads an xz stream on stdin, writes what it unpacks to OUT.part
 * (created with MODE, octal), renames it to OUT and prints the number of bytes written.
 * Exit 0 when the stream was whole and every byte written; 1 a bad or cut stream; 2 a bad
 * command line; 3 an I/O error (OUT.part is removed on any failure).
 *
 * The harness uploads this next to the agent, then sends the agent xz-compressed on the
 * stdin of this program (transport: packed uploads). A sandbox image has no xz tool to rely
 * on, so the decoder travels with it: Debian's liblzma.a, linked into a program with no C
 * library at all (no glibc static start-up, which alone is ten times this program's size).
 * What liblzma needs from a libc is here: memcpy, memmove, memset, memcmp, a malloc that
 * maps each block, and the stack protector's guard (liblzma is built with it, and reads
 * the guard from the thread pointer, so _start points %fs at a small block first). Its
 * constructors (liblzma picks its CRC code at start-up) run from _start.
 *
 * x86-64 Linux only, as the agent itself.
 */
#include <asm/unistd.h>
#include <lzma.h>
#include <stddef.h>
#include <stdint.h>

static long sys6(long n, long a, long b, long c, long d, long e, long f) {
  long r;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  __asm__ volatile("syscall"
                   : "=a"(r)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return r;
}

static long sys3(long n, long a, long b, long c) {
  return sys6(n, a, b, c, 0, 0, 0);
}

/* The byte loops go through volatile pointers: a compiler that sees a copy loop would
 * otherwise make it a call to memcpy, this very function. */
void* memcpy(void* dst, const void* src, size_t n) {
  volatile unsigned char* d = dst;
  const volatile unsigned char* s = src;
  while (n--) *d++ = *s++;
  return dst;
}

void* memmove(void* dst, const void* src, size_t n) {
  volatile unsigned char* d = dst;
  const volatile unsigned char* s = src;
  if (d < s)
    while (n--) *d++ = *s++;
  else
    while (n--) d[n] = s[n];
  return dst;
}

void* memset(void* dst, int c, size_t n) {
  volatile unsigned char* d = dst;
  while (n--) *d++ = (unsigned char)c;
  return dst;
}

int memcmp(const void* x, const void* y, size_t n) {
  const unsigned char* a = x;
  const unsigned char* b = y;
  for (; n; --n, ++a, ++b)
    if (*a != *b) return *a - *b;
  return 0;
}

/* Each block its own anonymous mapping (zeroed), its length kept in front of it. */
void* malloc(size_t n) {
  if (n > ((size_t)1 << 40)) return 0;
  long p = sys6(__NR_mmap, 0, (long)(n + 16), 3 /* read|write */, 0x22 /* private|anonymous */, -1, 0);
  if (p < 0 && p > -4096) return 0;
  *(size_t*)p = n + 16;
  return (char*)p + 16;
}

void* calloc(size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return 0;
  return malloc(count * size);
}

void free(void* p) {
  if (!p) return;
  char* block = (char*)p - 16;
  sys3(__NR_munmap, (long)block, (long)*(size_t*)block, 0);
}

void __stack_chk_fail(void) {  // NOLINT(bugprone-reserved-identifier): the name liblzma calls
  sys3(__NR_exit_group, 125, 0, 0);
  for (;;) {
  }
}

static size_t length(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}

static int write_all(int fd, const unsigned char* p, size_t n) {
  while (n) {
    long w = sys3(__NR_write, fd, (long)p, (long)n);
    if (w == -4 /* EINTR */) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static void say(const char* text) {
  (void)write_all(2, (const unsigned char*)text, length(text));
}

/* Unpacks fd 0 into `out`; the unpacked size in *written. 0, 1 (bad stream) or 3 (I/O). */
static int unpack(int out, uint64_t* written) {
  static unsigned char in[65536], buf[65536];
  lzma_stream s = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&s, UINT64_MAX, 0) != LZMA_OK) return 3;
  lzma_ret r = LZMA_OK;
  int eof = 0;
  while (r == LZMA_OK) {
    if (s.avail_in == 0 && !eof) {
      long n = sys3(__NR_read, 0, (long)in, sizeof in);
      if (n == -4) continue;
      if (n < 0) return 3;
      eof = n == 0;
      s.next_in = in;
      s.avail_in = (size_t)n;
    }
    s.next_out = buf;
    s.avail_out = sizeof buf;
    r = lzma_code(&s, eof ? LZMA_FINISH : LZMA_RUN);
    size_t got = sizeof buf - s.avail_out;
    if (got && write_all(out, buf, got) != 0) return 3;
    *written += got;
  }
  return r == LZMA_STREAM_END ? 0 : 1;
}

static int parse_mode(const char* text, long* mode) {
  *mode = 0;
  if (!*text) return -1;
  for (; *text; ++text) {
    if (*text < '0' || *text > '7' || *mode > 07777) return -1;
    *mode = *mode * 8 + (*text - '0');
  }
  return *mode > 07777 ? -1 : 0;
}

static void print_number(uint64_t v) {
  char text[24];
  int i = 23;
  text[i] = '\n';
  do {
    text[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v && i > 0);
  (void)write_all(1, (const unsigned char*)text + i, (size_t)(24 - i));
}

static int run(int argc, char** argv) {
  long mode = 0;
  if (argc != 3 || parse_mode(argv[2], &mode) != 0 || length(argv[1]) > 4000) {
    say("usage: isoprobe-unxz OUT MODE(octal) < STREAM.xz\n");
    return 2;
  }
  char part[4096 + 8];
  size_t n = length(argv[1]);
  memcpy(part, argv[1], n);
  memcpy(part + n, ".part", 6);
  const long flags = 01 /* O_WRONLY */ | 0100 /* O_CREAT */ | 01000 /* O_TRUNC */ | 02000000 /* O_CLOEXEC */;
  long fd = sys3(__NR_open, (long)part, flags, mode);
  if (fd < 0) {
    say("isoprobe-unxz: cannot create the output file\n");
    return 3;
  }
  uint64_t written = 0;
  int rc = unpack((int)fd, &written);
  if (rc == 0 && sys3(__NR_fchmod, fd, mode, 0) != 0) rc = 3; /* the umask narrowed it */
  if (sys3(__NR_close, fd, 0, 0) != 0 && rc == 0) rc = 3;
  if (rc == 0 && sys3(__NR_rename, (long)part, (long)argv[1], 0) != 0) rc = 3;
  if (rc != 0) {
    sys3(__NR_unlink, (long)part, 0, 0);
    say(rc == 1 ? "isoprobe-unxz: the stream is not a whole xz stream\n" : "isoprobe-unxz: I/O error\n");
    return rc;
  }
  print_number(written);
  return 0;
}

static unsigned long thread_block[16]; /* %fs:0 points at itself; the guard at %fs:0x28 */
// NOLINTNEXTLINE(bugprone-reserved-identifier): the linker's names for the constructors
extern void (*__init_array_start[])(void) __attribute__((visibility("hidden")));
// NOLINTNEXTLINE(bugprone-reserved-identifier)
extern void (*__init_array_end[])(void) __attribute__((visibility("hidden")));

/* The kernel enters here with argc at the stack pointer, then argv. */
__attribute__((used)) static void start_c(long* stack) {
  thread_block[0] = (unsigned long)thread_block;
  thread_block[5] = 0x5a17c0de5a17c0deul;
  sys3(__NR_arch_prctl, 0x1002 /* ARCH_SET_FS */, (long)thread_block, 0);
  for (void (**f)(void) = __init_array_start; f < __init_array_end; ++f) (*f)();
  sys3(__NR_exit_group, run((int)stack[0], (char**)(stack + 1)), 0, 0);
}

__asm__(
    ".text\n.global _start\n_start:\n"
    "  xor %rbp, %rbp\n  mov %rsp, %rdi\n  and $-16, %rsp\n  call start_c\n  hlt\n");
