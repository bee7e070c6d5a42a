// One client swapchain as the frame path sees it: the shared images, the runtime swapchain they
// are copied into, and (frame worker only) which runtime image holds the newest content.
#pragma once

#include <memory>

#include "../backends/backend.hpp"
#include "../gpu/shared_swapchain.hpp"
#include "xrc/protocol_rules.hpp"

namespace xrc {

struct SwapchainCore {
  uint32_t id = 0;
  uint32_t clientId = 0;
  SwapchainRequest request;
  std::unique_ptr<gpu::SharedSwapchain> shared;
  std::shared_ptr<RuntimeSwapchain> runtime;

  // Frame worker thread only.
  uint64_t copies = 0;  // completed copies == release ordinal of the next one
  bool hasContent = false;
  uint32_t latestRuntimeIndex = 0;
  uint64_t latestOrdinal = 0;
  uint64_t latestCopyValue = 0;
};

}  // namespace xrc
