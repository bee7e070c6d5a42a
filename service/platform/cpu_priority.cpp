#include "cpu_priority.hpp"

#include <fmt/format.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace xrc::platform {
namespace {

// Linux keeps a nice value per thread: PRIO_PROCESS with a thread id names that thread alone.
id_t callingThread() { return id_t(::syscall(SYS_gettid)); }

}  // namespace

int lowestNiceAllowedBy(rlim_t limit) {
  if (limit == RLIM_INFINITY || limit >= 40) return kLowestNice;
  return std::clamp(20 - int(limit), kLowestNice, 20);
}

int fallbackNice(int asked, int current, rlim_t limit) {
  const int chosen = std::max(asked, lowestNiceAllowedBy(limit));
  return std::min(chosen, current);
}

int currentNice() {
  errno = 0;
  const int nice = ::getpriority(PRIO_PROCESS, callingThread());
  return errno == 0 ? nice : 0;
}

NiceOutcome applyNice(int asked) {
  NiceOutcome out;
  out.asked = asked;
  out.before = currentNice();
  out.applied = out.before;
  if (asked == out.before) return out;
  if (::setpriority(PRIO_PROCESS, callingThread(), asked) == 0) {
    out.applied = asked;
    return out;
  }
  const int error = errno;
  rlimit limit{};
  const rlim_t soft = ::getrlimit(RLIMIT_NICE, &limit) == 0 ? limit.rlim_cur : 0;
  const int fallback = fallbackNice(asked, out.before, soft);
  if (fallback < out.before && ::setpriority(PRIO_PROCESS, callingThread(), fallback) == 0) {
    out.applied = fallback;
  }
  out.refusal = fmt::format(
      "nice {} refused ({}): it needs CAP_SYS_NICE or RLIMIT_NICE of {} or more (now {}; systemd: LimitNICE={})", asked,
      std::strerror(error), 20 - asked, soft == RLIM_INFINITY ? std::string("unlimited") : std::to_string(soft), asked);
  return out;
}

}  // namespace xrc::platform
