// The far side of the round-trip workloads (pipe, unix socket, TCP): a thread that reads
// messages of a fixed size and writes each one straight back, until its input ends.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <thread>

namespace isoprobe::workloads {

// Message size of every round trip (pipe, unix socket, TCP).
inline constexpr std::size_t kRoundTripBytes = 64;

// Reads exactly n bytes (false on end of input or error). A blocking descriptor that
// answers EAGAIN is waited for with poll() and tried again; not_ready_count() counts
// those waits (a round-trip workload reports them as the counter "not_ready").
bool read_full(int fd, void* buf, std::size_t n);
// Writes exactly n bytes (false on error); EAGAIN as in read_full.
bool write_full(int fd, const void* buf, std::size_t n);
long not_ready_count();

// The timed loop of every round-trip workload: each iteration writes a message of
// kRoundTripBytes to out_fd and reads it back from in_fd. Reports the counter
// "not_ready" (EAGAIN waits, see read_full); fails the benchmark naming `what`.
void time_round_trips(benchmark::State& state, int out_fd, int in_fd, char fill, const char* what);

// Closes a descriptor when it goes out of scope. For sockets it shuts writing down
// first, so an EchoPeer declared before it sees end of input and its thread can be joined.
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

class EchoPeer {
 public:
  // Takes ownership of in_fd and out_fd (they may be the same socket) and closes them
  // when the echo loop ends, so the other side sees end of input instead of hanging.
  EchoPeer(int in_fd, int out_fd);
  // Joins the thread: the caller must have ended the input first (closed its write end
  // or shut the socket down for writing).
  ~EchoPeer();
  EchoPeer(const EchoPeer&) = delete;
  EchoPeer& operator=(const EchoPeer&) = delete;

 private:
  int in_fd_;
  int out_fd_;
  std::thread thread_;
};

}  // namespace isoprobe::workloads
