// Typed results used at every module boundary (daemon, client-lib, tools).
#pragma once

#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace xrc {

// Mirrors wire::ErrorCode one to one (see ipc-schema/xrc.capnp); kept separate so that pure
// logic and its unit tests do not depend on generated code.
enum class ErrorCode {
  none = 0,
  invalidArgument,
  callOrder,
  versionMismatch,
  deviceMismatch,
  unsupported,
  notFound,
  exhausted,
  timeout,
  internal,
  permissionDenied,
};

const char* errorCodeName(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::internal;
  std::string message;

  std::string describe() const { return fmt::format("{}: {}", errorCodeName(code), message); }
};

template <typename... Args>
Error makeError(ErrorCode code, fmt::format_string<Args...> format, Args&&... args) {
  return Error{code, fmt::format(format, std::forward<Args>(args)...)};
}

// Either a value or an Error. Deliberately small: ok(), value(), error().
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const Error& error() const { return std::get<Error>(state_); }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool failed_ = false;
};

using Status = Result<void>;

}  // namespace xrc
