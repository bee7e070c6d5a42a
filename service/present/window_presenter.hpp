// The window output's presentation: each composition of the display is blitted (scaled to fit,
// letterboxed) into an image of a VkSwapchainKHR on a Wayland or X11 window and presented, following seed
// 003 exactly:
// - CPU pacing: frame N waits for frame N-2's fence, so at most one presentation submission is
//   queued beyond the one the GPU is executing;
// - present semaphores are reused only when a later submission that acquired the same image has
//   completed (PresentHistory), never destroyed on a guess;
// - a resize, VK_ERROR_OUT_OF_DATE_KHR or VK_SUBOPTIMAL_KHR recreates the swapchain; the old one
//   and its semaphores are destroyed once the first present of its successor is proven
//   processed, and past a bounded backlog of old swapchains the queue is idled and they all go.
// The window has its own pace (mailbox where the driver offers it, so a slow window never slows
// the display loop that clients are paced by); closing it ends the output, not the daemon.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <functional>
#include <memory>

#include "../gpu/gpu_device.hpp"
#include "display_presenter.hpp"
#include "native_window.hpp"
#include "present_history.hpp"

namespace xrc::present {

class WindowPresenter final : public DisplayPresenter {
 public:
  // Old swapchains awaiting proof before the queue is idled to free them (seed 003's backlog).
  static constexpr size_t kMaxOldSwapchains = 8;
  // `gpu`'s instance must have the window system's surfaceInstanceExtensions().
  static Result<std::unique_ptr<WindowPresenter>> create(gpu::GpuDevice& gpu, std::unique_ptr<NativeWindow> window);
  WindowPresenter(gpu::GpuDevice& gpu, std::unique_ptr<NativeWindow> window);
  ~WindowPresenter() override;

  void present(const PresentSource& source) override;
  void finish() override { idle(); }
  PresenterStats stats() const override XRC_EXCLUDES(statsMutex_);

 private:
  using History = PresentHistory<VkSemaphore, VkSwapchainKHR>;
  // One frame in flight: its command buffer, fence and acquire semaphore, reused two frames
  // later once the fence proves the frame done.
  struct Slot {
    VkCommandBuffer commands = VK_NULL_HANDLE;
    vk::Fence fence;
    vk::Semaphore acquired;
    bool pending = false;  // submitted, fence not yet waited for
    uint64_t serial = 0;
  };

  Status init();
  Status recreateSwapchain();
  // Waits for `slot`'s submission (bounded) and tells the history what it proves.
  Status retire(Slot& slot);
  // Waits for every submission and for the queue (presents included) to go idle.
  void idle();
  void destroy(std::vector<History::Retired> retired);
  Result<VkSemaphore> presentSemaphore();
  void record(VkCommandBuffer cb, const PresentSource& source, VkImage target);
  // Ends the output: waits for the queue, destroys everything. `shutdown`: the daemon is stopping.
  void close(bool shutdown = false);
  void updateStats(const std::function<void(PresenterStats&)>& change) XRC_EXCLUDES(statsMutex_);

  gpu::GpuDevice& gpu_;
  std::unique_ptr<NativeWindow> window_;  // display thread only, as is everything below but stats
  VkSurfaceKHR surface_ = VK_NULL_HANDLE;
  VkSurfaceFormatKHR surfaceFormat_{};
  VkPresentModeKHR presentMode_ = VK_PRESENT_MODE_FIFO_KHR;
  VkSwapchainKHR swapchain_ = VK_NULL_HANDLE;  // owned through history_
  std::vector<VkImage> images_;
  VkExtent2D extent_{};
  bool recreate_ = false;
  vk::CommandPool pool_;
  std::array<Slot, 2> slots_;
  vk::Fence idleFence_;  // signalled by an empty submission once the queue ran everything before it
  uint64_t serial_ = 0;
  History history_{kMaxOldSwapchains};

  mutable Mutex statsMutex_;
  PresenterStats stats_ XRC_GUARDED_BY(statsMutex_);
};

}  // namespace xrc::present
