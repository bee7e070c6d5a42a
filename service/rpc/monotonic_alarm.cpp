#include "monotonic_alarm.hpp"

#include <kj/debug.h>
#include <sys/timerfd.h>

#include <cerrno>
#include <cstring>

#include "xrc/unique_fd.hpp"

namespace xrc {

Result<std::shared_ptr<MonotonicAlarm>> MonotonicAlarm::create(kj::LowLevelAsyncIoProvider& io) {
  UniqueFd fd(::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
  if (!fd.valid()) return makeError(ErrorCode::internal, "timerfd_create: {}", std::strerror(errno));
  const int raw = fd.get();
  auto stream = io.wrapInputFd(fd.release(), kj::LowLevelAsyncIoProvider::TAKE_OWNERSHIP |
                                                 kj::LowLevelAsyncIoProvider::ALREADY_CLOEXEC |
                                                 kj::LowLevelAsyncIoProvider::ALREADY_NONBLOCK);
  return std::make_shared<MonotonicAlarm>(kj::mv(stream), raw);
}

kj::Promise<void> MonotonicAlarm::at(int64_t ns) {
  if (pending_) return KJ_EXCEPTION(FAILED, "MonotonicAlarm: a wake-up is already pending");
  // it_value 0 would disarm it: a time already past is asked as 1 ns after the clock's start,
  // which has passed too, so the timerfd expires at once.
  if (ns <= 0) ns = 1;
  itimerspec spec{};
  spec.it_value.tv_sec = ns / 1'000'000'000;
  spec.it_value.tv_nsec = ns % 1'000'000'000;
  if (::timerfd_settime(fd_, TFD_TIMER_ABSTIME, &spec, nullptr) != 0) {
    return KJ_EXCEPTION(FAILED, "timerfd_settime failed", errno);
  }
  pending_ = true;
  // Arming again (timerfd_settime) clears an expiration a cancelled wake-up left unread. Done or
  // dropped, the read's node goes before whatever follows this promise runs.
  return expirations_->tryRead(&expirationCount_, sizeof expirationCount_, sizeof expirationCount_)
      .ignoreResult()
      .attach(kj::defer([this] { pending_ = false; }));
}

}  // namespace xrc
