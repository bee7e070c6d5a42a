#include "demo_client.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <thread>
#include <utility>

#include "../common/pattern.hpp"

namespace xrc::tools {

namespace {

struct RenderTarget {
  std::unique_ptr<client::Swapchain> swapchain;
  uint32_t index = 0;  // position among this client's swapchains (pattern key)
  VkFormat format = VK_FORMAT_UNDEFINED;
  uint32_t width = 0, height = 0, layers = 1, mips = 1;
  vk::CommandPool pool;
  std::vector<vk::HostBuffer> staging;  // per image
  std::vector<VkCommandBuffer> commands;
  std::vector<vk::Fence> fences;
  uint64_t ordinal = 0;
  // --gpu-hang-every: the next rendering waits for this timeline value (then cleared).
  VkSemaphore hangSemaphore = VK_NULL_HANDLE;
  uint64_t hangValue = 0;
};

VkDeviceSize mipBytes(const RenderTarget& t, uint32_t mip) {
  return VkDeviceSize(std::max(1u, t.width >> mip)) * std::max(1u, t.height >> mip) * t.layers * 4;
}

Status createTarget(VulkanApp& app, client::Connection& conn, const SwapchainRequest& request, uint32_t index,
                    RenderTarget& t) {
  auto sc = conn.createSwapchain(request);
  if (!sc) return sc.error();
  t.swapchain = std::move(sc).value();
  t.index = index;
  t.format = VkFormat(request.format);
  t.width = request.width;
  t.height = request.height;
  t.layers = request.arraySize * request.faceCount;  // a cube map's faces are layers too
  t.mips = request.mipCount;
  VkDevice device = app.device();
  VkCommandPoolCreateInfo poolInfo{};
  poolInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  poolInfo.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  poolInfo.queueFamilyIndex = app.queueFamily();
  VkCommandPool pool;
  if (auto s = vk::check(vkCreateCommandPool(device, &poolInfo, nullptr, &pool), "vkCreateCommandPool"); !s) return s;
  t.pool = vk::CommandPool(device, pool);
  const size_t count = t.swapchain->images().size();
  t.commands.resize(count);
  VkCommandBufferAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = uint32_t(count);
  if (auto s = vk::check(vkAllocateCommandBuffers(device, &alloc, t.commands.data()), "vkAllocateCommandBuffers"); !s) {
    return s;
  }
  VkDeviceSize total = 0;
  for (uint32_t m = 0; m < t.mips; ++m) total += mipBytes(t, m);
  for (size_t i = 0; i < count; ++i) {
    auto buffer = vk::createHostBuffer(app.device(), app.memory(), total, VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
    if (!buffer) return buffer.error();
    t.staging.push_back(std::move(buffer).value());
    VkFenceCreateInfo fenceInfo{};
    fenceInfo.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    fenceInfo.flags = VK_FENCE_CREATE_SIGNALED_BIT;
    VkFence fence;
    if (auto s = vk::check(vkCreateFence(device, &fenceInfo, nullptr, &fence), "vkCreateFence"); !s) return s;
    t.fences.emplace_back(device, fence);
  }
  return {};
}

// Writes this frame's pattern into image `image` (already acquired and waited).
// Records `write` (transfer writes into image `image`) between the layout transitions from and
// back to the attachment layout, and submits it signalling `fence`.
template <typename Write>
Status submitTransferWrite(VulkanApp& app, RenderTarget& t, uint32_t image, VkFence fence, const char* what,
                           Write&& write) {
  VkCommandBuffer cb = t.commands[image];
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(cb, &begin);
  VkImageMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
  barrier.srcAccessMask = 0;
  barrier.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.oldLayout = vk::attachmentLayout(t.format);
  barrier.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
  barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  barrier.image = t.swapchain->images()[image];
  barrier.subresourceRange = {vk::aspectMask(t.format), 0, t.mips, 0, t.layers};
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0,
                       nullptr, 1, &barrier);
  write(cb, barrier.image, barrier.subresourceRange);
  barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = 0;
  barrier.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
  barrier.newLayout = vk::attachmentLayout(t.format);
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr, 0,
                       nullptr, 1, &barrier);
  vkEndCommandBuffer(cb);
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cb;
  // A hang waits in the rendering's own batch: a batch's wait holds back only that batch, and
  // the release's barrier, submitted later, waits for this rendering.
  VkPipelineStageFlags hangStage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  VkTimelineSemaphoreSubmitInfo hangValues{};
  hangValues.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  hangValues.waitSemaphoreValueCount = 1;
  hangValues.pWaitSemaphoreValues = &t.hangValue;
  if (t.hangSemaphore != VK_NULL_HANDLE) {
    submit.pNext = &hangValues;
    submit.waitSemaphoreCount = 1;
    submit.pWaitSemaphores = &t.hangSemaphore;
    submit.pWaitDstStageMask = &hangStage;
  }
  const Status submitted = vk::check(vkQueueSubmit(app.queue(), 1, &submit, fence), what);
  t.hangSemaphore = VK_NULL_HANDLE;
  return submitted;
}

// Holds a target's next rendering back on the GPU for `ms`: it waits on a timeline value that a
// thread of ours signals from the host later. The release submitted after it waits too.
class GpuHang {
 public:
  ~GpuHang() {
    for (auto& t : releasers_) t.join();
  }
  Status hang(VulkanApp& app, RenderTarget& t, uint32_t ms) {
    if (!semaphore_) {
      auto created = vk::createSemaphore(app.device(), VK_SEMAPHORE_TYPE_TIMELINE);
      if (!created) return created.error();
      semaphore_ = std::move(created).value();
    }
    const uint64_t value = ++value_;
    VkSemaphore semaphore = semaphore_.get();
    t.hangSemaphore = semaphore;
    t.hangValue = value;
    held_++;
    releasers_.emplace_back([this, device = app.device(), semaphore, value, ms] {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      held_--;  // before the signal: whatever the signal lets happen sees the hang over
      (void)vk::signalTimeline(device, semaphore, value);
    });
    return {};
  }
  // Some rendering is still held back: its semaphore not signalled yet.
  bool holding() const { return held_.load() > 0; }

 private:
  vk::Semaphore semaphore_;  // destroyed after the threads are joined (declared first)
  uint64_t value_ = 0;
  std::atomic<int> held_{0};
  std::vector<std::thread> releasers_;
};

// A GPU clear to a frame-varying color (benchmarks: no CPU work per texel).
Status clearImage(VulkanApp& app, RenderTarget& t, uint32_t image, uint32_t seed, VkFence fence) {
  const float shade = float((t.ordinal * 7 + seed * 31) % 256) / 255.f;
  return submitTransferWrite(
      app, t, image, fence, "vkQueueSubmit(clear)",
      [&](VkCommandBuffer cb, VkImage target, const VkImageSubresourceRange& range) {
        if (vk::isDepthFormat(t.format)) {
          VkClearDepthStencilValue value{shade, 0};
          vkCmdClearDepthStencilImage(cb, target, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &value, 1, &range);
        } else {
          VkClearColorValue value{};
          value.float32[0] = shade;
          value.float32[1] = 1.f - shade;
          value.float32[3] = 1.f;
          vkCmdClearColorImage(cb, target, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &value, 1, &range);
        }
      });
}

// `clearOnly`: a GPU clear to a frame-varying color instead of the CPU-written pattern, for
// benchmarks of many full-size clients (the pattern costs milliseconds of CPU per frame).
Status render(VulkanApp& app, RenderTarget& t, uint32_t image, uint32_t seed, uint32_t alpha, bool clearOnly) {
  VkDevice device = app.device();
  VkFence fence = t.fences[image].get();
  if (auto s = vk::check(vkWaitForFences(device, 1, &fence, VK_TRUE, 2000000000ull), "vkWaitForFences(render)"); !s) {
    return s;
  }
  vkResetFences(device, 1, &fence);
  const bool depth = vk::isDepthFormat(t.format);
  if (clearOnly) return clearImage(app, t, image, seed, fence);
  auto* out = static_cast<uint8_t*>(t.staging[image].mapped);
  std::vector<VkBufferImageCopy> regions;
  VkDeviceSize offset = 0;
  for (uint32_t mip = 0; mip < t.mips; ++mip) {
    const uint32_t w = std::max(1u, t.width >> mip), h = std::max(1u, t.height >> mip);
    for (uint32_t layer = 0; layer < t.layers; ++layer) {
      const pattern::Key key{seed, t.index, t.ordinal, layer, mip, alpha};
      auto* texels = reinterpret_cast<uint32_t*>(out + offset + VkDeviceSize(layer) * w * h * 4);
      for (uint32_t y = 0; y < h; ++y) {
        for (uint32_t x = 0; x < w; ++x) {
          if (depth) {
            const float d = pattern::depth(key, x, y);
            std::memcpy(&texels[y * w + x], &d, 4);
          } else {
            texels[y * w + x] = pattern::color(key, x, y);
          }
        }
      }
    }
    VkBufferImageCopy region{};
    region.bufferOffset = offset;
    region.imageSubresource = {VkImageAspectFlags(depth ? VK_IMAGE_ASPECT_DEPTH_BIT : VK_IMAGE_ASPECT_COLOR_BIT), mip,
                               0, t.layers};
    region.imageExtent = {w, h, 1};
    regions.push_back(region);
    offset += mipBytes(t, mip);
  }

  return submitTransferWrite(app, t, image, fence, "vkQueueSubmit(render)",
                             [&](VkCommandBuffer cb, VkImage target, const VkImageSubresourceRange&) {
                               vkCmdCopyBufferToImage(cb, t.staging[image].buffer.get(), target,
                                                      VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, uint32_t(regions.size()),
                                                      regions.data());
                             });
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p / 100.0 * double(v.size())))];
}

}  // namespace

int runDemo(const DemoOptions& o) {
  auto fail = [&](const char* what, const Error& e) {
    std::fprintf(stderr, "%s: %s: %s\n", o.name.c_str(), what, e.describe().c_str());
    return 1;
  };
  auto blendMode = parseBlendModes(o.blendMode);
  if (!blendMode || blendMode.value().size() != 1) {
    return fail("--blend-mode", blendMode ? makeError(ErrorCode::invalidArgument, "give one mode") : blendMode.error());
  }
  auto system = client::describe(o.socket);
  if (!system) return fail("describe", system.error());
  auto app = VulkanApp::create(system.value(), o.name);
  if (!app) return fail("vulkan", app.error());
  client::ConnectOptions connectOptions;
  connectOptions.socketPath = o.socket;
  connectOptions.applicationName = o.name;
  connectOptions.vulkan = app.value()->binding();
  connectOptions.overlay = o.overlay;
  connectOptions.overlayPlacement = o.overlayPlacement;
  connectOptions.protocolMinor = o.protocolMinor;
  connectOptions.answerWaitsAtOnce = o.answerWaitsAtOnce;
  auto conn = client::Connection::connect(connectOptions);
  if (!conn) return fail("connect", conn.error());
  client::Connection& c = *conn.value();

  const auto& views = c.system().views;
  const uint32_t width = o.width ? o.width : views[0].recommendedWidth;
  const uint32_t height = o.height ? o.height : views[0].recommendedHeight;
  const bool array = o.stereo == "array";
  VkFormat colorFormat = VK_FORMAT_UNDEFINED;
  for (VkFormat f : c.system().swapchainFormats) {
    if (f == VK_FORMAT_R8G8B8A8_SRGB || f == VK_FORMAT_R8G8B8A8_UNORM) {
      colorFormat = f;
      break;
    }
  }
  if (colorFormat == VK_FORMAT_UNDEFINED) return fail("formats", makeError(ErrorCode::unsupported, "no RGBA8 format"));

  std::vector<RenderTarget> targets(array ? 1 : views.size());
  SwapchainRequest color;
  color.usageFlags = xr_usage::colorAttachment | xr_usage::transferDst | xr_usage::sampled;
  color.format = colorFormat;
  color.width = width;
  color.height = height;
  color.arraySize = array ? uint32_t(views.size()) : 1;
  color.mipCount = o.mips;
  for (uint32_t i = 0; i < targets.size(); ++i) {
    if (auto s = createTarget(*app.value(), c, color, i, targets[i]); !s) return fail("swapchain", s.error());
  }
  if (o.depth) {
    SwapchainRequest depth = color;
    depth.usageFlags = xr_usage::depthStencilAttachment | xr_usage::transferDst;
    depth.format = VK_FORMAT_D32_SFLOAT;
    depth.arraySize = uint32_t(views.size());
    depth.mipCount = 1;
    targets.emplace_back();
    if (auto s = createTarget(*app.value(), c, depth, uint32_t(targets.size() - 1), targets.back()); !s) {
      return fail("depth swapchain", s.error());
    }
  }
  // --shape cube: a square cube map swapchain of its own, its six faces rendered as six layers.
  size_t cubeTarget = 0;
  if (o.shape == "cube") {
    SwapchainRequest cube = color;
    cube.faceCount = 6;
    cube.width = cube.height = std::min(width, height);
    cube.arraySize = 1;
    cube.mipCount = 1;
    targets.emplace_back();
    cubeTarget = targets.size() - 1;
    if (auto s = createTarget(*app.value(), c, cube, uint32_t(cubeTarget), targets.back()); !s) {
      return fail("cube swapchain", s.error());
    }
  }
  std::printf("client %u connected sync=%s swapchains=", c.clientId(), syncModeName(c.syncMode()));
  for (const auto& t : targets) std::printf("%u%s", t.swapchain->id(), &t == &targets.back() ? "\n" : ",");
  std::fflush(stdout);

  // This demo renders and releases whether or not the daemon shows it (shouldRender), so that
  // hidden sessions exercise the copy path too.
  const uint64_t blendFlags = o.alpha < 255 ? layer_flags::blendTextureSourceAlpha : 0;
  std::vector<double> releaseUs, frameUs;
  uint64_t renders = 0;  // images rendered (--render-once renders each only once)
  // Per frame: the client-lib calls that must not block (beginFrame, acquire, release, endFrame);
  // wait() is left out, it waits for the GPU.
  std::vector<double> frameCallsUs;
  using Clock = std::chrono::steady_clock;
  const auto since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
  };
  // How far apart the daemon's predicted display times of successive frames are (the pacing).
  std::map<int64_t, uint64_t> targetSpacingNs;
  int64_t lastTargetNs = 0;
  std::optional<std::pair<bool, bool>> shownVisibility;
  auto last = std::chrono::steady_clock::now();
  GpuHang gpuHang;  // --gpu-hang-every; before the device goes, its threads have signalled
  uint64_t timingsWhileHeld = 0;
  for (uint64_t frame = 0; frame < o.frames; ++frame) {
    if (o.stallAfter > 0 && frame == o.stallAfter) {
      std::printf("stalled after %llu frames\n", (unsigned long long)frame);
      std::fflush(stdout);
      char byte;
      while (::read(STDIN_FILENO, &byte, 1) > 0) {
      }
      return 0;
    }
    auto timing = c.waitFrame();
    if (!timing) return fail("waitFrame", timing.error());
    // A frame timing that came while the last frame's rendering was still held back on the GPU:
    // the daemon did not make the next frame wait for it (timeline mode, 1.13).
    if (gpuHang.holding()) timingsWhileHeld++;
    if (timing.value().stopping) {
      // The daemon is shutting down and asks its clients to leave: end the session cleanly.
      std::printf("daemon is stopping: leaving after %llu frames\n", (unsigned long long)frame);
      std::fflush(stdout);
      return 0;
    }
    if (lastTargetNs != 0) targetSpacingNs[timing.value().predictedDisplayTimeNs - lastTargetNs]++;
    lastTargetNs = timing.value().predictedDisplayTimeNs;
    const std::pair<bool, bool> visibility{timing.value().visible, timing.value().focused};
    if (shownVisibility != visibility) {
      std::printf("visibility visible=%d focused=%d frame=%llu\n", visibility.first, visibility.second,
                  (unsigned long long)frame);
      std::fflush(stdout);
      shownVisibility = visibility;
    }
    std::chrono::microseconds work(int64_t(o.workMs) * 1000);
    if (o.lateEvery > 0 && frame % o.lateEvery == o.lateEvery - 1) {
      // Past the frame's display time: one and a half of the client's frame periods from now.
      work += std::chrono::microseconds(timing.value().predictedDisplayPeriodNs * 3 / 2 / 1000);
    }
    if (work.count() > 0) std::this_thread::sleep_for(work);
    auto callStart = Clock::now();
    if (auto s = c.beginFrame(timing.value().frameId); !s) return fail("beginFrame", s.error());
    double callsUs = since(callStart);
    for (auto& t : targets) {
      callStart = Clock::now();
      auto index = t.swapchain->acquire();
      callsUs += since(callStart);
      if (!index) return fail("acquire", index.error());
      if (auto s = t.swapchain->wait(std::chrono::seconds(2)); !s) return fail("wait", s.error());
      if (o.renderUs > 0) std::this_thread::sleep_for(std::chrono::microseconds(o.renderUs));
      // The frame's last image: the frame's releases then leave with its endFrame at once (an
      // earlier one's hang would hold this thread in the next image's wait, whose fence the
      // driver may signal only after the hung batch).
      if (o.gpuHangEvery > 0 && frame % o.gpuHangEvery == o.gpuHangEvery - 1 && &t == &targets.back()) {
        // In host mode the stop holds this thread at the release, which waits for the rendering.
        if (auto s = gpuHang.hang(*app.value(), t, o.gpuHangMs); !s) return fail("gpu hang", s.error());
        std::printf("gpu hang %u ms at frame %llu\n", o.gpuHangMs, (unsigned long long)frame);
        std::fflush(stdout);
      }
      const uint32_t alpha = vk::isDepthFormat(t.format) ? 255 : o.alpha;
      // --render-once: every image keeps the content of its first frame (images are acquired in turn).
      const bool renderThisFrame = !o.renderOnce || t.ordinal < t.swapchain->images().size();
      if (renderThisFrame) {
        renders++;
        if (auto s = render(*app.value(), t, index.value(), o.seed, alpha, o.clearOnly); !s) {
          return fail("render", s.error());
        }
      }
      if (o.finishRender && renderThisFrame) {
        VkFence fence = t.fences[index.value()].get();
        if (auto s = vk::check(vkWaitForFences(app.value()->device(), 1, &fence, VK_TRUE, 2000000000ull),
                               "vkWaitForFences(finish render)");
            !s) {
          return fail("render", s.error());
        }
      }
      const auto before = std::chrono::steady_clock::now();
      if (auto s = t.swapchain->release(); !s) return fail("release", s.error());
      releaseUs.push_back(since(before));
      callsUs += releaseUs.back();
      t.ordinal++;
    }
    client::Layer projection;
    projection.flags = blendFlags;
    for (uint32_t v = 0; v < views.size(); ++v) {
      client::ProjectionView view;
      const RenderTarget& colorTarget = array ? targets[0] : targets[v];
      view.subImage = {colorTarget.swapchain->id(), 0, 0, int32_t(width), int32_t(height), array ? v : 0};
      view.pose.orientation = {0, std::sin(o.viewYaw / 2), 0, std::cos(o.viewYaw / 2)};
      if (o.depth) {
        view.hasDepth = true;
        view.depthSubImage = {targets.back().swapchain->id(), 0, 0, int32_t(width), int32_t(height), v};
      }
      projection.views.push_back(view);
    }
    std::vector<client::Layer> layers;
    if (o.projection) layers.push_back(projection);
    if (o.quadPx > 0) {
      // Placed so that the headless backend (tan(half fov) = 1) shows it 1:1 at (quadX, quadY).
      client::Layer quad;
      quad.kind = client::Layer::Kind::quad;
      quad.flags = blendFlags;
      quad.quadSubImage = {targets[0].swapchain->id(), 0, 0, int32_t(o.quadPx), int32_t(o.quadPx), 0};
      const float centerX = (float(o.quadX) + float(o.quadPx) / 2) / float(views[0].recommendedWidth) * 2 - 1;
      const float centerY = (float(o.quadY) + float(o.quadPx) / 2) / float(views[0].recommendedHeight) * 2 - 1;
      quad.quadPose.position[0] = centerX;
      quad.quadPose.position[1] = -centerY;
      quad.quadPose.position[2] = -1;
      quad.quadWidth = 2 * float(o.quadPx) / float(views[0].recommendedWidth);
      quad.quadHeight = 2 * float(o.quadPx) / float(views[0].recommendedHeight);
      layers.push_back(quad);
    }
    if (!o.shape.empty()) {
      // Centred on the head's position (LOCAL), facing -z: a quarter turn of arc each way.
      client::Layer shaped;
      shaped.kind = o.shape == "cylinder"   ? client::Layer::Kind::cylinder
                    : o.shape == "equirect" ? client::Layer::Kind::equirect
                                            : client::Layer::Kind::cube;
      shaped.flags = blendFlags;
      shaped.quadSubImage = {targets[0].swapchain->id(), 0, 0, int32_t(width), int32_t(height), 0};
      if (shaped.kind == client::Layer::Kind::cube) {
        const RenderTarget& cube = targets[cubeTarget];
        shaped.quadSubImage = {cube.swapchain->id(), 0, 0, int32_t(cube.width), int32_t(cube.height), 0};
      }
      shaped.quadPose.position = timing.value().localInStage.position;
      shaped.radius = o.shapeRadius;
      constexpr float kQuarterTurn = 1.5707963f;
      shaped.centralAngle = kQuarterTurn;
      shaped.aspectRatio = 1;
      // Equirect: longitudes and latitudes within +-45 degrees (equirect2's 90 x 90 window).
      shaped.scale[0] = 4;
      shaped.bias[0] = -1.5f;
      shaped.scale[1] = 2;
      shaped.bias[1] = -0.5f;
      layers.push_back(shaped);
    }
    if (o.colorScale.size() == 4 && o.colorBias.size() == 4) {
      for (auto& layer : layers) {
        layer.hasColor = true;
        std::copy(o.colorScale.begin(), o.colorScale.end(), layer.colorScale);
        std::copy(o.colorBias.begin(), o.colorBias.end(), layer.colorBias);
      }
    }
    callStart = Clock::now();
    if (auto s = c.endFrame(timing.value().frameId, timing.value().predictedDisplayTimeNs, layers,
                            blendMode.value().front());
        !s) {
      return fail("endFrame", s.error());
    }
    frameCallsUs.push_back(callsUs + since(callStart));
    const auto now = std::chrono::steady_clock::now();
    frameUs.push_back(std::chrono::duration<double, std::micro>(now - last).count());
    last = now;
  }
  // One more round trip surfaces any error the daemon answered to the last frame's calls.
  auto final = c.waitFrame();
  if (!final) return fail("final waitFrame", final.error());
  std::printf("frames %llu ok round_trips=%llu\n", (unsigned long long)o.frames,
              (unsigned long long)c.blockingRoundTrips());
  if (o.gpuHangEvery > 0) {
    std::printf("frame timings while rendering was held: %llu\n", (unsigned long long)timingsWhileHeld);
  }
  if (o.stats) {
    std::printf("release_us p50=%.1f p99=%.1f frame_interval_us p50=%.1f round_trips_per_frame=%.2f\n",
                percentile(releaseUs, 50), percentile(releaseUs, 99), percentile(frameUs, 50),
                double(c.blockingRoundTrips()) / double(o.frames + 1));
    std::printf("frame_calls_us_p50=%.1f frame_calls_us_p99=%.1f socket_writes_per_frame=%.2f renders_per_frame=%.3f\n",
                percentile(frameCallsUs, 50), percentile(frameCallsUs, 99),
                double(c.socketWrites()) / double(o.frames + 1),
                double(renders) / double(std::max<uint64_t>(1, o.frames * targets.size())));
    std::printf("target_spacing_ns");
    for (const auto& [spacing, count] : targetSpacingNs) {
      std::printf(" %lld:%llu", (long long)spacing, (unsigned long long)count);
    }
    std::printf("\n");
  }
  if (o.hold) std::printf("holding the session until stdin closes\n");
  std::fflush(stdout);
  if (o.hold) {
    char byte;
    while (::read(STDIN_FILENO, &byte, 1) > 0) {
    }
  }
  return 0;
}

}  // namespace xrc::tools
