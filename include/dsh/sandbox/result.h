// SPDX-License-Identifier: Apache-2.0
// Result<T>: the return type of the seam's pure code (parsing, validation, JSON).
// Shaped like std::expected (C++23; g++ 12 has no <expected> in C++20) so it can be swapped
// later: value(), error(), and the monadic and_then / transform / or_else, so a chain of checks
// reads top to bottom without an early return after each step. The error side is always
// invalid input with a kind and a message; value() on an error throws InvalidSandboxInputError,
// so the conversion to the seam's exception happens in one place.
#pragma once

#include <concepts>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "dsh/sandbox/errors.h"

namespace dsh::sandbox {

// What kind of input was wrong, for a caller that reacts to it (a missing directory can be
// created, a malformed document cannot). The message always says how to fix it.
enum class ErrorCode {
  kInvalidArgument,  // a value outside what is accepted: an unknown name, a relative path
  kNotFound,         // a named file or directory does not exist (or cannot be reached)
  kNotADirectory,    // a named path exists but is not a directory
  kUntrusted,        // a file or symlink a confined run could have written
  kMalformed,        // a document that is not the JSON or the shape expected
  kIo,               // reading a file failed
};

// "invalid-argument", "not-found", ...: for logs and tests.
constexpr std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid-argument";
    case ErrorCode::kNotFound:
      return "not-found";
    case ErrorCode::kNotADirectory:
      return "not-a-directory";
    case ErrorCode::kUntrusted:
      return "untrusted";
    case ErrorCode::kMalformed:
      return "malformed";
    case ErrorCode::kIo:
      return "io";
  }
  return "unknown";
}

// What was wrong with the input and how to fix it, in one sentence a person can act on.
// `message` first, so InvalidInput{"..."} stays an invalid argument.
struct InvalidInput {
  std::string message;
  ErrorCode code = ErrorCode::kInvalidArgument;

  bool operator==(const InvalidInput&) const = default;
};

template <typename T>
class Result;

namespace detail {

template <typename R>
struct IsResult : std::false_type {};
template <typename T>
struct IsResult<Result<T>> : std::true_type {};

// The result of invoking `f` on the value (or on nothing, for Result<void>).
template <typename F, typename... Args>
using Invoked = std::remove_cvref_t<std::invoke_result_t<F, Args...>>;

}  // namespace detail

template <typename T>
class [[nodiscard]] Result {
 public:
  using value_type = T;

  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit
  Result(InvalidInput error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool has_value() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  const T& value() const& { return std::get<0>(checked()); }
  T& value() & { return std::get<0>(checked()); }
  T&& value() && { return std::get<0>(std::move(checked())); }
  const InvalidInput& error() const& { return std::get<1>(state_); }
  InvalidInput&& error() && { return std::get<1>(std::move(state_)); }
  ErrorCode error_code() const { return error().code; }

  template <typename U>
  T value_or(U&& fallback) const& {
    return has_value() ? std::get<0>(state_) : static_cast<T>(std::forward<U>(fallback));
  }

  // f(value) -> Result<U>: runs only on a value; an error passes through unchanged.
  template <typename F>
  auto and_then(F&& f) const& {
    using R = detail::Invoked<F, const T&>;
    static_assert(detail::IsResult<R>::value, "and_then: f must return a Result");
    if (!has_value()) return R(error());
    return std::invoke(std::forward<F>(f), std::get<0>(state_));
  }
  template <typename F>
  auto and_then(F&& f) && {
    using R = detail::Invoked<F, T&&>;
    static_assert(detail::IsResult<R>::value, "and_then: f must return a Result");
    if (!has_value()) return R(std::get<1>(std::move(state_)));
    return std::invoke(std::forward<F>(f), std::get<0>(std::move(state_)));
  }

  // f(value) -> U: Result<U> of the value mapped; an error passes through unchanged.
  template <typename F>
  auto transform(F&& f) const& {
    using U = std::remove_cv_t<std::invoke_result_t<F, const T&>>;
    if (!has_value()) return Result<U>(error());
    if constexpr (std::is_void_v<U>) {
      std::invoke(std::forward<F>(f), std::get<0>(state_));
      return Result<U>();  // U is void: dependent, so bound to the specialization below
    } else {
      return Result<U>(std::invoke(std::forward<F>(f), std::get<0>(state_)));
    }
  }
  template <typename F>
  auto transform(F&& f) && {
    using U = std::remove_cv_t<std::invoke_result_t<F, T&&>>;
    if (!has_value()) return Result<U>(std::get<1>(std::move(state_)));
    if constexpr (std::is_void_v<U>) {
      std::invoke(std::forward<F>(f), std::get<0>(std::move(state_)));
      return Result<U>();  // U is void: dependent, so bound to the specialization below
    } else {
      return Result<U>(std::invoke(std::forward<F>(f), std::get<0>(std::move(state_))));
    }
  }

  // f(error) -> Result<T>: runs only on an error (to add context or recover).
  template <typename F>
  Result or_else(F&& f) && {
    if (has_value()) return std::move(*this);
    return std::invoke(std::forward<F>(f), std::get<1>(std::move(state_)));
  }

  // f(error) -> InvalidInput: the error rewritten (context added); a value passes through.
  template <typename F>
  Result transform_error(F&& f) && {
    if (has_value()) return std::move(*this);
    return Result(std::invoke(std::forward<F>(f), std::get<1>(std::move(state_))));
  }

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
  using value_type = void;

  Result() = default;
  Result(InvalidInput error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit

  bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  void value() const {
    if (!ok_) throw InvalidSandboxInputError(error_.message);
  }
  const InvalidInput& error() const& { return error_; }
  InvalidInput&& error() && { return std::move(error_); }
  ErrorCode error_code() const { return error_.code; }

  // f() -> Result<U>: the next check, run only when this one passed.
  template <typename F>
  auto and_then(F&& f) const& {
    using R = detail::Invoked<F>;
    static_assert(detail::IsResult<R>::value, "and_then: f must return a Result");
    if (!ok_) return R(error_);
    return std::invoke(std::forward<F>(f));
  }

  // f() -> U: Result<U> of what f makes, when this check passed.
  template <typename F>
  auto transform(F&& f) const& {
    using U = std::remove_cv_t<std::invoke_result_t<F>>;
    if (!ok_) return Result<U>(error_);
    if constexpr (std::is_void_v<U>) {
      std::invoke(std::forward<F>(f));
      return Result<void>();
    } else {
      return Result<U>(std::invoke(std::forward<F>(f)));
    }
  }

  template <typename F>
  Result or_else(F&& f) const& {
    if (ok_) return {};
    return std::invoke(std::forward<F>(f), error_);
  }

  template <typename F>
  Result transform_error(F&& f) const& {
    if (ok_) return {};
    return Result(std::invoke(std::forward<F>(f), error_));
  }

 private:
  InvalidInput error_;
  bool ok_ = true;
};

}  // namespace dsh::sandbox
