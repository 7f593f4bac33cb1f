// Expected<T>: a value or an Error, for recoverable failures (C++23's std::expected is
// not available in this toolchain's C++20 mode). Results must be looked at: the type is
// [[nodiscard]].
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "harness/common/error.h"

namespace isoharness {

struct Error {
  std::string message;
  int code = 0;  // errno or an exit status where one applies; 0 otherwise
};

template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Expected(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    ISOHARNESS_CHECK(has_value());
    return std::get<0>(v_);
  }
  const T& value() const& {
    ISOHARNESS_CHECK(has_value());
    return std::get<0>(v_);
  }
  T&& value() && {
    ISOHARNESS_CHECK(has_value());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    ISOHARNESS_CHECK(!has_value());
    return std::get<1>(v_);
  }

 private:
  std::variant<T, Error> v_;
};

// For operations that return nothing on success.
struct Ok {};
using Status = Expected<Ok>;

inline Error make_error(std::string message, int code = 0) {
  return Error{std::move(message), code};
}

}  // namespace isoharness
