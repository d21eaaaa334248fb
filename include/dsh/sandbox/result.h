// SPDX-License-Identifier: Apache-2.0
// Result<T>: the return type of the seam's pure code (parsing, validation, JSON).
// Shaped like std::expected (C++23; g++ 12 has no <expected> in C++20) so it can be swapped
// later. The error side is always invalid input; value() on an error throws
// InvalidSandboxInputError, so the conversion to the seam's exception happens in one place.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "dsh/sandbox/errors.h"

namespace dsh::sandbox {

// What was wrong with the input and how to fix it, in one sentence a person can act on.
struct InvalidInput {
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit
  Result(InvalidInput error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool has_value() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  const T& value() const& { return std::get<0>(checked()); }
  T& value() & { return std::get<0>(checked()); }
  T&& value() && { return std::get<0>(std::move(checked())); }
  const InvalidInput& error() const& { return std::get<1>(state_); }

 private:
  std::variant<T, InvalidInput>& checked() {
    if (!has_value()) throw InvalidSandboxInputError(error().message);
    return state_;
  }
  const std::variant<T, InvalidInput>& checked() const {
    if (!has_value()) throw InvalidSandboxInputError(error().message);
    return state_;
  }

  std::variant<T, InvalidInput> state_;
};

// A check with no value: success, or what was wrong.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(InvalidInput error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit

  bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  void value() const {
    if (!ok_) throw InvalidSandboxInputError(error_.message);
  }
  const InvalidInput& error() const& { return error_; }

 private:
  InvalidInput error_;
  bool ok_ = true;
};

}  // namespace dsh::sandbox
