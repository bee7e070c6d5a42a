// Clang thread-safety annotations (checked with -Wthread-safety when building with clang;
// documentation elsewhere). Every mutex-guarded member names its mutex.
#pragma once

#include <mutex>

#if defined(__clang__)
#define XRC_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define XRC_THREAD_ANNOTATION(x)
#endif

#define XRC_CAPABILITY(x) XRC_THREAD_ANNOTATION(capability(x))
#define XRC_GUARDED_BY(x) XRC_THREAD_ANNOTATION(guarded_by(x))
#define XRC_REQUIRES(...) XRC_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define XRC_ACQUIRE(...) XRC_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define XRC_RELEASE(...) XRC_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define XRC_EXCLUDES(...) XRC_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define XRC_SCOPED_CAPABILITY XRC_THREAD_ANNOTATION(scoped_lockable)

namespace xrc {

// std::mutex with the capability annotation, so clang can check XRC_GUARDED_BY members.
class XRC_CAPABILITY("mutex") Mutex {
 public:
  void lock() XRC_ACQUIRE() { m_.lock(); }
  void unlock() XRC_RELEASE() { m_.unlock(); }
  std::mutex& native() { return m_; }

 private:
  std::mutex m_;
};

class XRC_SCOPED_CAPABILITY Lock {
 public:
  explicit Lock(Mutex& m) XRC_ACQUIRE(m) : lock_(m.native()) {}
  ~Lock() XRC_RELEASE() {}
  std::unique_lock<std::mutex>& native() { return lock_; }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace xrc
