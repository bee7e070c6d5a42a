// Swapchains no session uses any more, kept until the GPU has finished the copies already
// submitted for them. Freeing a shared image while a copy still reads it is a use after free
// inside the driver (on lavapipe the daemon crashed in its queue thread when a client destroyed
// swapchains under load), and waiting for the copy would block the frame worker, and with it
// every other client, on one client's GPU work. So retirement never waits: what is still in
// flight is kept and freed by a later collect().
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "swapchain_core.hpp"
#include "xrc/thread_annotations.hpp"

namespace xrc {

class RetiredSwapchains {
 public:
  // Whether a retired swapchain's GPU work is done (injectable for tests); by default its
  // shared images' copy fences, without waiting.
  using IdleCheck = std::function<bool(SwapchainCore&)>;
  explicit RetiredSwapchains(IdleCheck idle = defaultIdleCheck);
  ~RetiredSwapchains();
  RetiredSwapchains(const RetiredSwapchains&) = delete;
  RetiredSwapchains& operator=(const RetiredSwapchains&) = delete;

  // Called (on the retiring thread, outside the lock) whenever retire() keeps a swapchain, so
  // that whoever collects can look again soon; set before the first retire().
  void onKept(std::function<void()> kept) { onKept_ = std::move(kept); }
  // Takes a swapchain off the frame path: freed now if idle, else kept. Any thread.
  void retire(std::shared_ptr<SwapchainCore> core) XRC_EXCLUDES(mutex_);
  // Frees every kept swapchain that has become idle; never waits. Returns how many are kept.
  size_t collect() XRC_EXCLUDES(mutex_);
  // Shutdown: collects until none is kept or `timeout` passed. What is still in flight then is
  // left allocated on purpose (the process is ending; freeing it could crash the driver).
  size_t drain(std::chrono::milliseconds timeout) XRC_EXCLUDES(mutex_);
  size_t kept() const XRC_EXCLUDES(mutex_);

  static bool defaultIdleCheck(SwapchainCore& core);

 private:
  IdleCheck idle_;
  std::function<void()> onKept_;
  mutable Mutex mutex_;
  std::vector<std::shared_ptr<SwapchainCore>> kept_ XRC_GUARDED_BY(mutex_);
};

}  // namespace xrc
