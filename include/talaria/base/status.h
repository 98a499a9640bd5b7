// Status and Result<T>: how every fallible talaria function reports failure.
//
// No exception crosses a module boundary; a function that can fail returns a Status (no value)
// or a Result<T> (= tl::expected<T, Status>). Both are [[nodiscard]] so a dropped error is a
// compile-time warning (and, with -Werror, a build failure).
// Thread-safety: value types; safe to copy between threads.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <tl/expected.hpp>

namespace talaria {

// Mirrors the canonical code set (abseil / gRPC) so callers can map codes to wire errors.
enum class StatusCode : unsigned char {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kPermissionDenied,
  kDeadlineExceeded,
  kCancelled,
  kUnavailable,
  kResourceExhausted,
  kFailedPrecondition,
  kInternal,
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "NotFound: no such tool" — for logs; never parse it.
  std::string ToString() const;

  // Prefixes the message with context ("loading config: ..."), keeping the code.
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgumentError(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFoundError(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status AlreadyExistsError(std::string m) {
  return {StatusCode::kAlreadyExists, std::move(m)};
}
inline Status PermissionDeniedError(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
inline Status DeadlineExceededError(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}
inline Status CancelledError(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
inline Status UnavailableError(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status ResourceExhaustedError(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status FailedPreconditionError(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

template <typename T>
using Result = tl::expected<T, Status>;

// Lets `return SomeError(...)` work in a function returning Result<T>.
inline tl::unexpected<Status> Err(Status s) { return tl::unexpected<Status>(std::move(s)); }

namespace internal {
// What TALARIA_RETURN_IF_ERROR / TALARIA_TRY return: converts to Status and to any Result<T>.
struct ErrorReturn {
  Status status;
  operator Status() && { return std::move(status); }  // NOLINT: implicit by design
  template <typename T>
  operator Result<T>() && {  // NOLINT
    return tl::unexpected<Status>(std::move(status));
  }
};
inline Status AsStatus(Status s) { return s; }
template <typename T>
Status AsStatus(const Result<T>& r) {
  return r ? Status() : r.error();
}
}  // namespace internal

}  // namespace talaria

// Evaluates `expr` (a Status or Result); on failure returns its Status from the caller.
#define TALARIA_RETURN_IF_ERROR(expr)                                          \
  do {                                                                         \
    ::talaria::Status talaria_status_ = ::talaria::internal::AsStatus((expr)); \
    if (!talaria_status_.ok())                                                 \
      return ::talaria::internal::ErrorReturn{std::move(talaria_status_)};     \
  } while (0)

// Unwraps a Result<T>: yields the value, or returns the error from the enclosing function.
#define TALARIA_TRY(expr)                                                          \
  __extension__({                                                                  \
    auto talaria_result_ = (expr);                                                 \
    if (!talaria_result_)                                                          \
      return ::talaria::internal::ErrorReturn{std::move(talaria_result_).error()}; \
    std::move(*talaria_result_);                                                   \
  })

// Programmer errors only (never model, user or network input): abort with a message.
#define TALARIA_CHECK(cond)                                                   \
  do {                                                                        \
    if (!(cond)) ::talaria::internal::CheckFailed(#cond, __FILE__, __LINE__); \
  } while (0)

namespace talaria::internal {
[[noreturn]] void CheckFailed(const char* cond, const char* file, int line);
}  // namespace talaria::internal
