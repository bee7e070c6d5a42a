// Private state of Connection and Swapchain.
#pragma once

#include <kj/async.h>

#include <memory>
#include <optional>

#include "rpc_link.hpp"
#include "xrc/client.hpp"
#include "xrc/vk_util.hpp"

namespace xrc::client {

struct Connection::Impl : private kj::TaskSet::ErrorHandler {
  Impl() : tasks(*this) {}

  std::unique_ptr<RpcLink> link;
  wire::Session::Client session{nullptr};
  SystemDescription system;
  SyncMode syncMode = SyncMode::host;
  uint32_t clientId = 0;
  VulkanBinding vulkan;
  PFN_vkImportSemaphoreFdKHR importSemaphoreFd = nullptr;
  uint64_t roundTrips = 0;

  // Answers to calls sent without waiting; the first error is kept for the next call to return.
  kj::TaskSet tasks;
  std::optional<Error> asyncError;
  void track(kj::Promise<Status> promise, const char* what);
  Status takeAsyncError();

  std::optional<uint64_t> waitedFrame;
  std::optional<uint64_t> begunFrame;

 private:
  void taskFailed(kj::Exception&& exception) override;
};

struct Swapchain::Impl {
  struct PerImage {
    vk::Memory memory;  // declared first: destroyed after the image
    vk::Image image;
    vk::Semaphore renderingDone;  // binary mode
    vk::Semaphore copyingDone;    // binary mode
    vk::Fence fence;              // "per-image fence", created signalled (seed 000)
    vk::Fence releaseFence;       // host mode: waited before the release call
    VkCommandBuffer acquireCommands = VK_NULL_HANDLE;
    VkCommandBuffer releaseCommands = VK_NULL_HANDLE;
    bool everAcquired = false;
    bool releasedLocally = false;  // last release happened after the daemon was gone
    // The daemon's answer to this image's last release; waited before acquiring it again.
    std::optional<kj::ForkedPromise<Status>> pendingRelease;
  };

  Connection::Impl* connection = nullptr;
  wire::Swapchain::Client rpc{nullptr};
  uint32_t id = 0;
  VkImageCreateInfo info{};
  vk::CommandPool pool;
  std::vector<PerImage> perImage;  // destroyed after `images` users are done (see ~Swapchain)
  std::vector<VkImage> images;
  std::unique_ptr<ImageCycle> cycle;
  std::vector<uint32_t> acquiredOrder;  // indices acquired, oldest first, not yet released
  std::vector<uint32_t> waitedOrder;

  Status recordCommands(PerImage& image);
  Status submit(VkCommandBuffer commands, VkSemaphore wait, VkSemaphore signal, VkFence fence);
};

}  // namespace xrc::client
