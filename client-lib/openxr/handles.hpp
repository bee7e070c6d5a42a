// Process-wide table of live OpenXR handles. Handle values count up and are never reused, so a
// destroyed or forged handle is recognised (XR_ERROR_HANDLE_INVALID) instead of dereferenced,
// and a handle of the wrong type is refused the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>

#include "xrc/thread_annotations.hpp"

namespace xrc::openxr {

enum class HandleType { instance, session, space, swapchain, actionSet, action };

class Handles {
 public:
  static Handles& get();

  template <typename T>
  uint64_t add(std::shared_ptr<T> object) {
    Lock lock(mutex_);
    const uint64_t handle = next_++;
    entries_.emplace(handle, Entry{T::kHandleType, std::move(object)});
    return handle;
  }

  // The object behind `handle` if it is live and of type T, else null.
  template <typename T>
  std::shared_ptr<T> find(uint64_t handle) const {
    Lock lock(mutex_);
    auto it = entries_.find(handle);
    if (it == entries_.end() || it->second.type != T::kHandleType) return nullptr;
    return std::static_pointer_cast<T>(it->second.object);
  }

  void remove(uint64_t handle) {
    std::shared_ptr<void> last;  // destroyed outside the lock: destructors may remove children
    Lock lock(mutex_);
    auto it = entries_.find(handle);
    if (it == entries_.end()) return;
    last = std::move(it->second.object);
    entries_.erase(it);
  }

 private:
  struct Entry {
    HandleType type;
    std::shared_ptr<void> object;
  };
  mutable Mutex mutex_;
  uint64_t next_ XRC_GUARDED_BY(mutex_) = 0x1000;
  std::unordered_map<uint64_t, Entry> entries_ XRC_GUARDED_BY(mutex_);
};

template <typename Xr>
uint64_t toRaw(Xr handle) {
  return uint64_t(reinterpret_cast<uintptr_t>(handle));
}
template <typename Xr>
Xr fromRaw(uint64_t raw) {
  return reinterpret_cast<Xr>(uintptr_t(raw));
}

}  // namespace xrc::openxr
