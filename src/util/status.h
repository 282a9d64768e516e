// Error values of every library under src/. Nothing in them throws across its
// public interface for expected failures (bad input, missing files, missing
// vendor libraries); those come back as a Status or a Result<T> whose message
// names the problem and, where there is one, the fix.
#ifndef VGPU_UTIL_STATUS_H_
#define VGPU_UTIL_STATUS_H_

#include <optional>
#include <string>
#include <utility>

namespace vgpu {

class Status {
 public:
  Status() = default;  // OK
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message), true); }

  bool ok() const { return !failed_; }
  const std::string& message() const { return message_; }

 private:
  Status(std::string message, bool failed) : message_(std::move(message)), failed_(failed) {}
  std::string message_;
  bool failed_ = false;
};

// A value or the Status that explains why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}            // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}    // NOLINT: must be an error
  static Result Error(std::string message) { return Result(Status::Error(std::move(message))); }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  const std::string& message() const { return status_.message(); }

  const T& value() const& { return *value_; }
  T& value() & { return *value_; }
  T&& value() && { return std::move(*value_); }
  const T& operator*() const& { return *value_; }
  T& operator*() & { return *value_; }
  const T* operator->() const { return &*value_; }
  T* operator->() { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace vgpu

#endif  // VGPU_UTIL_STATUS_H_
