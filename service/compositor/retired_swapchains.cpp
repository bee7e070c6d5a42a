#include "retired_swapchains.hpp"

#include <iterator>
#include <thread>

#include "../log.hpp"

namespace xrc {

RetiredSwapchains::RetiredSwapchains(IdleCheck idle) : idle_(std::move(idle)) {}

RetiredSwapchains::~RetiredSwapchains() {
  Lock lock(mutex_);
  if (kept_.empty()) return;
  log::error("{} retired swapchains still have copies in flight at exit; their memory is left to the process's end",
             kept_.size());
  // Deliberately never freed (not even by static destructors, which run after the device is
  // gone): the GPU may still read them.
  static auto& leftAtExit = *std::make_unique<std::vector<std::shared_ptr<SwapchainCore>>>().release();
  leftAtExit.insert(leftAtExit.end(), std::make_move_iterator(kept_.begin()), std::make_move_iterator(kept_.end()));
  kept_.clear();
}

bool RetiredSwapchains::defaultIdleCheck(SwapchainCore& core) { return !core.shared || core.shared->idle(); }

void RetiredSwapchains::retire(std::shared_ptr<SwapchainCore> core) {
  if (!core) return;
  bool kept = false;
  if (idle_(*core)) {
    core.reset();
  } else {
    Lock lock(mutex_);
    kept_.push_back(std::move(core));
    kept = true;
  }
  (void)collect();
  if (kept && onKept_) onKept_();
}

size_t RetiredSwapchains::collect() {
  std::vector<std::shared_ptr<SwapchainCore>> done;
  size_t remaining = 0;
  {
    Lock lock(mutex_);
    for (auto it = kept_.begin(); it != kept_.end();) {
      if (idle_(**it)) {
        done.push_back(std::move(*it));
        it = kept_.erase(it);
      } else {
        ++it;
      }
    }
    remaining = kept_.size();
  }
  return remaining;  // `done` frees the idle ones here, outside the lock
}

size_t RetiredSwapchains::drain(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t remaining = collect();
  while (remaining > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    remaining = collect();
  }
  return remaining;
}

size_t RetiredSwapchains::kept() const {
  Lock lock(mutex_);
  return kept_.size();
}

}  // namespace xrc
