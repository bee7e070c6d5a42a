#include "gpu_floor.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "../common/process.hpp"
#include "bench_util.hpp"
#include "xrc/monotonic_clock.hpp"
#include "xrc/vk_util.hpp"

namespace xrc::bench {

namespace {

constexpr uint64_t kFenceTimeoutNs = 2000000000ull;

// A device on the first GPU's family 0, two pre-recorded command buffers (each one barrier on a
// small image, like client-lib's acquire and release commands) and optionally a clear: of both
// layers of a 2-layer image, or with a swapchain per view, one per layer.
class FloorDevice {
 public:
  static Result<std::unique_ptr<FloorDevice>> create(uint32_t clearWidth, uint32_t clearHeight, uint32_t swapchains) {
    auto d = std::make_unique<FloorDevice>();
    d->swapchains_ = swapchains;
    auto firstDevice = createInstanceWithFirstDevice(d->instance_, VK_API_VERSION_1_1);
    if (!firstDevice) return firstDevice.error();
    const VkPhysicalDevice physical = firstDevice.value();
    const float priority = 1.f;
    VkDeviceQueueCreateInfo qi{};
    qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qi.queueFamilyIndex = 0;
    qi.queueCount = 1;
    qi.pQueuePriorities = &priority;
    VkDeviceCreateInfo dci{};
    dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qi;
    VkDevice device;
    if (auto s = vk::check(vkCreateDevice(physical, &dci, nullptr, &device), "vkCreateDevice"); !s) return s.error();
    d->device_.reset(device);
    vkGetDeviceQueue(device, 0, 0, &d->queue_);
    VkPhysicalDeviceMemoryProperties memory;
    vkGetPhysicalDeviceMemoryProperties(physical, &memory);

    auto image = [&](uint32_t w, uint32_t h, uint32_t layers) -> Status {
      const VkImageCreateInfo info =
          rgba8ImageInfo(w, h, layers, VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT);
      VkImage raw;
      if (auto s = vk::check(vkCreateImage(device, &info, nullptr, &raw), "vkCreateImage"); !s) return s;
      d->images_.emplace_back(device, raw);
      auto bound = vk::bindDeviceLocalMemory(device, memory, raw, "floor", false);
      if (!bound) return bound.error();
      d->memories_.push_back(std::move(bound).value());
      return {};
    };
    if (auto s = image(16, 16, 1); !s) return s.error();
    const bool clear = clearWidth > 0 && clearHeight > 0;
    if (clear) {
      if (auto s = image(clearWidth, clearHeight, 2); !s) return s.error();
    }

    VkCommandPoolCreateInfo poolInfo{};
    poolInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    poolInfo.queueFamilyIndex = 0;
    VkCommandPool pool;
    if (auto s = vk::check(vkCreateCommandPool(device, &poolInfo, nullptr, &pool), "vkCreateCommandPool"); !s) {
      return s.error();
    }
    d->pool_ = vk::CommandPool(device, pool);
    VkCommandBufferAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    alloc.commandPool = pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = uint32_t(d->commands_.size());
    if (auto s = vk::check(vkAllocateCommandBuffers(device, &alloc, d->commands_.data()), "vkAllocateCommandBuffers");
        !s) {
      return s.error();
    }
    // 0 and 1: a layout change of the small image there and back (acquire, release).
    for (int i = 0; i < 2; ++i) {
      VkCommandBufferBeginInfo begin{};
      begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
      vkBeginCommandBuffer(d->commands_[i], &begin);
      VkImageMemoryBarrier barrier{};
      barrier.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
      barrier.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
      barrier.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
      barrier.oldLayout = i == 0 ? VK_IMAGE_LAYOUT_UNDEFINED : VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
      barrier.newLayout = i == 0 ? VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL : VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
      barrier.srcQueueFamilyIndex = barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
      barrier.image = d->images_[0].get();
      barrier.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
      vkCmdPipelineBarrier(d->commands_[i], VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0,
                           0, nullptr, 0, nullptr, 1, &barrier);
      vkEndCommandBuffer(d->commands_[i]);
    }
    // 2 (and 3): the clear (the demo's GPU-clear rendering): both layers, or one per swapchain.
    if (clear) {
      for (uint32_t v = 0; v < swapchains; ++v) {
        VkCommandBuffer cb = d->commands_[2 + v];
        VkCommandBufferBeginInfo begin{};
        begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
        vkBeginCommandBuffer(cb, &begin);
        const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, swapchains == 1 ? 0 : v,
                                            swapchains == 1 ? 2u : 1u};
        const VkImageMemoryBarrier barrier = toTransferDst(d->images_[1].get(), range);
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0,
                             nullptr, 1, &barrier);
        VkClearColorValue color{};
        color.float32[0] = 0.5f;
        color.float32[3] = 1.f;
        vkCmdClearColorImage(cb, d->images_[1].get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &color, 1, &range);
        vkEndCommandBuffer(cb);
      }
      d->clear_ = true;
    }
    VkFenceCreateInfo fenceInfo{};
    fenceInfo.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    VkFence fence;
    if (auto s = vk::check(vkCreateFence(device, &fenceInfo, nullptr, &fence), "vkCreateFence"); !s) return s.error();
    d->fence_ = vk::Fence(device, fence);
    return d;
  }

  ~FloorDevice() {
    // Nothing below may go while the GPU still uses it (an error path may leave work queued).
    if (device_.get() != VK_NULL_HANDLE) vkDeviceWaitIdle(device_.get());
  }

  // One client frame's GPU work, per swapchain: acquire's submission and wait, the rendering,
  // release's submission, waited for in `host` mode (in `binary` it only signals a semaphore, and
  // the next acquire's wait covers it).
  Status frame(bool releaseWaits) {
    for (uint32_t v = 0; v < swapchains_; ++v) {
      if (auto s = submitAndWait(commands_[0], "acquire"); !s) return s;
      acquires_++;
      if (clear_) {
        if (auto s = submit(commands_[2 + v], VK_NULL_HANDLE, "vkQueueSubmit(clear)"); !s) return s;
      }
      if (auto s = releaseWaits ? submitAndWait(commands_[1], "release")
                                : submit(commands_[1], VK_NULL_HANDLE, "vkQueueSubmit(release)");
          !s) {
        return s;
      }
    }
    return {};
  }
  uint64_t acquires() const { return acquires_; }

 private:
  Status submit(VkCommandBuffer commands, VkFence fence, const char* what) {
    VkSubmitInfo info{};
    info.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    info.commandBufferCount = 1;
    info.pCommandBuffers = &commands;
    return vk::check(vkQueueSubmit(queue_, 1, &info, fence), what);
  }

  Status submitAndWait(VkCommandBuffer commands, const char* what) {
    VkFence fence = fence_.get();
    if (auto s = submit(commands, fence, what); !s) return s;
    if (auto s = vk::check(vkWaitForFences(device_.get(), 1, &fence, VK_TRUE, kFenceTimeoutNs), what); !s) return s;
    return vk::check(vkResetFences(device_.get(), 1, &fence), what);
  }

  // Declared first, destroyed last.
  vk::InstanceOwner instance_;
  vk::DeviceOwner device_;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::vector<vk::Memory> memories_;
  std::vector<vk::Image> images_;
  vk::CommandPool pool_;
  std::array<VkCommandBuffer, 4> commands_{};  // acquire, release, clear (view 0), clear of view 1
  vk::Fence fence_;
  bool clear_ = false;
  uint32_t swapchains_ = 1;
  uint64_t acquires_ = 0;
};

}  // namespace

int runGpuFloorClient(int64_t periodNs, double seconds, uint32_t clearWidth, uint32_t clearHeight, bool releaseWaits,
                      uint32_t swapchains) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // goes with the bench, also when the bench is killed
  auto device = FloorDevice::create(clearWidth, clearHeight, swapchains);
  if (!device) {
    std::printf("error: %s\n", device.error().describe().c_str());
    return 1;
  }
  std::printf("ready\n");
  std::fflush(stdout);
  char byte;
  while (::read(STDIN_FILENO, &byte, 1) > 0) {
  }
  // Every client runs on the same grid of periods (CLOCK_MONOTONIC is system-wide), from the
  // first boundary after a short settling time: they submit together, as clients of one display do.
  const int64_t start = (monotonicNowNs() + 100000000) / periodNs * periodNs + periodNs;
  const int64_t periods = std::llround(seconds * 1e9 / double(periodNs));
  uint64_t completed = 0;
  for (int64_t i = 0; i < periods; ++i) {
    const int64_t tick = start + i * periodNs;
    const int64_t now = monotonicNowNs();
    if (now >= tick + periodNs) continue;  // this period is already over: missed
    sleepUntilNs(tick);
    if (auto s = device.value()->frame(releaseWaits); !s) {
      std::printf("error: %s\n", s.error().describe().c_str());
      return 1;
    }
    completed++;
  }
  std::printf("completed=%llu acquires=%llu from=%lld to=%lld\n", (unsigned long long)completed,
              (unsigned long long)device.value()->acquires(), (long long)start,
              (long long)(start + periods * periodNs));
  return 0;
}

Result<GpuFloorResult> measureGpuFloor(const GpuFloorOptions& options) {
  if (options.clients == 0 || !(options.refreshHz > 0) || !(options.seconds > 0)) {
    return makeError(ErrorCode::invalidArgument, "GPU floor: needs clients, a refresh rate and a duration");
  }
  if (options.swapchains != 1 && options.swapchains != 2) {
    return makeError(ErrorCode::invalidArgument, "GPU floor: one swapchain per client or one per view (2), not {}",
                     options.swapchains);
  }
  const int64_t periodNs = int64_t(1e9 / options.refreshHz);
  std::vector<std::unique_ptr<tools::Process>> clients;
  for (uint32_t i = 0; i < options.clients; ++i) {
    clients.push_back(std::make_unique<tools::Process>(
        std::vector<std::string>{options.selfExe, "--floor-gpu-client", std::to_string(periodNs),
                                 std::to_string(options.seconds), std::to_string(options.clearWidth),
                                 std::to_string(options.clearHeight), options.releaseWaits ? "1" : "0",
                                 std::to_string(options.swapchains)},
        std::map<std::string, std::string>{}, options.dir + "/gpu-floor-" + std::to_string(i) + ".log", true));
  }
  for (auto& c : clients) {
    if (!c->waitForOutput("ready", std::chrono::seconds(120))) {
      return makeError(ErrorCode::internal, "GPU floor: a client did not get ready: {}", c->output());
    }
  }
  for (auto& c : clients) c->closeStdin();
  if (options.whileRunning) options.whileRunning();
  std::vector<double> rates;
  uint64_t completed = 0, acquires = 0;
  int64_t allFrom = 0, allTo = std::numeric_limits<int64_t>::max();
  const auto timeout = std::chrono::milliseconds(int64_t(options.seconds * 1000) + 30000);
  for (auto& c : clients) {
    const int status = c->wait(timeout);
    const std::string out = c->output();
    const auto at = out.find("completed=");
    if (status != 0 || at == std::string::npos) {
      return makeError(ErrorCode::internal, "GPU floor: a client failed (status {}): {}", status, out);
    }
    const uint64_t n = std::stoull(out.substr(at + 10));
    const auto acquiresAt = out.find("acquires=", at);
    if (acquiresAt != std::string::npos) acquires += std::stoull(out.substr(acquiresAt + 9));
    const auto fromAt = out.find("from=", at);
    const auto toAt = out.find("to=", at);
    if (fromAt == std::string::npos || toAt == std::string::npos) {
      return makeError(ErrorCode::internal, "GPU floor: a client did not say when it ran: {}", out);
    }
    allFrom = std::max<int64_t>(allFrom, std::stoll(out.substr(fromAt + 5)));
    allTo = std::min<int64_t>(allTo, std::stoll(out.substr(toAt + 3)));
    completed += n;
    rates.push_back(double(n) / options.seconds);
  }
  std::sort(rates.begin(), rates.end());
  GpuFloorResult result;
  result.framesPerSecondMedian = rates[rates.size() / 2];
  result.framesPerSecondMin = rates.front();
  result.acquiresPerFrame = completed > 0 ? double(acquires) / double(completed) : 0;
  result.allRunningFromNs = allFrom;
  result.allRunningToNs = allTo;
  return result;
}

}  // namespace xrc::bench
