// One client swapchain as the frame path sees it: the shared images, the runtime swapchain they
// are copied into, and which runtime image holds the newest content.
#pragma once

#include <memory>

#include "../backends/backend.hpp"
#include "../gpu/shared_swapchain.hpp"
#include "image_budget.hpp"
#include "xrc/protocol_rules.hpp"
#include "xrc/thread_annotations.hpp"

namespace xrc {

struct SwapchainCore {
  uint32_t id = 0;
  uint32_t clientId = 0;
  SwapchainRequest request;
  // The images' memory as charged to the client; given back after them (declared before them).
  ImageBudget::Charge charge;
  // Used by one thread at a time: the session's frame path runs on the RPC thread or, while it
  // has jobs queued there, on the frame worker (SessionState::workerJobs).
  std::unique_ptr<gpu::SharedSwapchain> shared;
  std::shared_ptr<RuntimeSwapchain> runtime;

  // Where the newest copied content is. Written by the frame path, read by it and by control
  // calls on the frame worker (readSwapchain).
  struct Latest {
    bool hasContent = false;
    uint32_t runtimeIndex = 0;
    uint64_t ordinal = 0;  // release ordinal: completed copies before this one
    uint64_t copyValue = 0;
  };
  Latest latest() const {
    Lock lock(latestMutex);
    return latest_;
  }
  void copied(uint32_t runtimeIndex, uint64_t copyValue) {
    Lock lock(latestMutex);
    latest_ = Latest{true, runtimeIndex, copies_++, copyValue};
  }

 private:
  mutable Mutex latestMutex;
  Latest latest_ XRC_GUARDED_BY(latestMutex);
  uint64_t copies_ XRC_GUARDED_BY(latestMutex) = 0;
};

}  // namespace xrc
