// Where a composed display frame goes besides the display itself: the window output presents
// each composition the headless display makes. The display core calls it once per display frame
// on its own thread, after submitting the composition.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

namespace xrc::present {

// A composed frame: `image` (in `layout`) is complete once `timeline` reaches `value`.
struct PresentSource {
  VkImage image = VK_NULL_HANDLE;
  VkImageLayout layout = VK_IMAGE_LAYOUT_UNDEFINED;
  uint32_t width = 0, height = 0;
  VkSemaphore timeline = VK_NULL_HANDLE;
  uint64_t value = 0;
};

struct PresenterStats {
  bool open = false;               // false once the window was closed
  uint32_t width = 0, height = 0;  // the swapchain's extent now
  uint64_t presents = 0;
  uint64_t skipped = 0;                // display frames not presented (no image in time, window minimized)
  uint64_t recreations = 0;            // swapchains created after the first (resize, out of date, suboptimal)
  uint32_t swapchainsLive = 0;         // the current one plus those awaiting proof they are unused
  uint32_t presentSemaphoresLive = 0;  // created and not yet destroyed
  // The most present submissions the GPU had not finished right after one was submitted: seed
  // 003's CPU pacing keeps it at 2 (one executing, one queued).
  uint32_t maxSubmissionsInFlight = 0;
  uint64_t backlogDrains = 0;  // times too many old swapchains made the queue go idle
};

class DisplayPresenter {
 public:
  virtual ~DisplayPresenter() = default;
  // Display thread: shows `source`, never waiting long (a window that cannot take the frame
  // in time misses it).
  virtual void present(const PresentSource& source) = 0;
  // Once the display thread has stopped, before the source image goes: waits (bounded) until no
  // submission reads it any more.
  virtual void finish() = 0;
  // Any thread.
  virtual PresenterStats stats() const = 0;
};

}  // namespace xrc::present
