#include "references.hpp"

#include "bench_util.hpp"

#include <thread>

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <vector>

#include "xrc/unique_fd.hpp"
#include "xrc/vk_util.hpp"

namespace xrc::bench {

namespace {
Percentiles summarize(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  auto at = [&](double p) { return v[std::min(v.size() - 1, size_t(p / 100.0 * double(v.size())))]; };
  return {at(50), at(99)};
}

}  // namespace

Percentiles socketPingPong(int iterations) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return {};
  UniqueFd mine(fds[0]), theirs(fds[1]);
  std::array<char, 64> buffer{};
  pid_t child = ::fork();
  if (child == 0) {
    mine.reset();
    for (int i = 0; i < iterations; ++i) {
      if (::read(theirs.get(), buffer.data(), buffer.size()) != ssize_t(buffer.size())) _exit(1);
      if (::write(theirs.get(), buffer.data(), buffer.size()) != ssize_t(buffer.size())) _exit(1);
    }
    _exit(0);
  }
  theirs.reset();
  std::vector<double> samples;
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (::write(mine.get(), buffer.data(), buffer.size()) != ssize_t(buffer.size())) break;
    if (::read(mine.get(), buffer.data(), buffer.size()) != ssize_t(buffer.size())) break;
    samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  ::waitpid(child, nullptr, 0);
  return summarize(samples);
}

Result<Percentiles> referenceCopy(uint32_t width, uint32_t height, uint32_t layers, int iterations,
                                  const ReferenceCopyOptions& options, std::string& queueUsed) {
  vk::InstanceOwner instance;
  auto firstDevice = createInstanceWithFirstDevice(instance, VK_API_VERSION_1_2);
  if (!firstDevice) return firstDevice.error();
  const VkPhysicalDevice physical = firstDevice.value();
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families.data());
  uint32_t family = UINT32_MAX;
  for (uint32_t i = 0; i < count; ++i) {
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) {
      family = i;
      queueUsed = "compute-only family " + std::to_string(i);
      break;
    }
  }
  if (family == UINT32_MAX) {
    family = 0;
    queueUsed = "graphics family 0 (no compute-only family)";
  }
  const float priority = 1.f;
  std::vector<VkDeviceQueueCreateInfo> queueInfos(1);
  VkDeviceQueueCreateInfo& qi = queueInfos[0];
  qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qi.queueFamilyIndex = family;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  // The headless daemon's runtime images are shared with the graphics family (family 0 here).
  const std::array<uint32_t, 2> sharedFamilies{family, 0};
  const bool concurrent = options.likeHeadless && family != 0;
  if (concurrent) {
    VkDeviceQueueCreateInfo graphics = qi;
    graphics.queueFamilyIndex = 0;
    queueInfos.push_back(graphics);
  }
  VkPhysicalDeviceVulkan12Features features12{};
  features12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  features12.hostQueryReset = VK_TRUE;
  VkDeviceCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  dci.pNext = &features12;
  dci.queueCreateInfoCount = uint32_t(queueInfos.size());
  dci.pQueueCreateInfos = queueInfos.data();
  VkDevice rawDevice;
  if (auto s = vk::check(vkCreateDevice(physical, &dci, nullptr, &rawDevice), "vkCreateDevice"); !s) return s.error();
  vk::DeviceOwner device;
  device.reset(rawDevice);
  VkQueue queue;
  vkGetDeviceQueue(rawDevice, family, 0, &queue);
  VkPhysicalDeviceMemoryProperties memoryProps;
  vkGetPhysicalDeviceMemoryProperties(physical, &memoryProps);
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical, &props);

  const VkImageCreateInfo info =
      rgba8ImageInfo(width, height, layers, VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT);
  VkExternalMemoryImageCreateInfo external{};
  external.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO;
  external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  std::array<vk::Memory, 2> memories;
  std::array<vk::Image, 2> images;
  for (int i = 0; i < 2; ++i) {
    // Image 0 is the source, 1 the destination.
    const bool exportable = options.exportable || (options.likeHeadless && i == 0);
    VkImageCreateInfo imageInfo = info;
    imageInfo.pNext = exportable ? &external : nullptr;
    if (concurrent && i == 1) {
      imageInfo.sharingMode = VK_SHARING_MODE_CONCURRENT;
      imageInfo.queueFamilyIndexCount = uint32_t(sharedFamilies.size());
      imageInfo.pQueueFamilyIndices = sharedFamilies.data();
    }
    VkImage image;
    if (auto s = vk::check(vkCreateImage(rawDevice, &imageInfo, nullptr, &image), "vkCreateImage"); !s) {
      return s.error();
    }
    images[i] = vk::Image(rawDevice, image);
    auto memory = vk::bindDeviceLocalMemory(rawDevice, memoryProps, image, "reference", exportable);
    if (!memory) return memory.error();
    memories[i] = std::move(memory).value();
  }
  VkCommandPoolCreateInfo poolInfo{};
  poolInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  poolInfo.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  poolInfo.queueFamilyIndex = family;
  VkCommandPool rawPool;
  vkCreateCommandPool(rawDevice, &poolInfo, nullptr, &rawPool);
  vk::CommandPool pool(rawDevice, rawPool);
  VkCommandBufferAllocateInfo cbInfo{};
  cbInfo.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  cbInfo.commandPool = rawPool;
  cbInfo.commandBufferCount = 1;
  VkCommandBuffer cb;
  vkAllocateCommandBuffers(rawDevice, &cbInfo, &cb);
  VkQueryPoolCreateInfo queryInfo{};
  queryInfo.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  queryInfo.queryType = VK_QUERY_TYPE_TIMESTAMP;
  queryInfo.queryCount = 2;
  VkQueryPool rawQueries;
  vkCreateQueryPool(rawDevice, &queryInfo, nullptr, &rawQueries);
  vk::QueryPool queries(rawDevice, rawQueries);
  VkFenceCreateInfo fenceInfo{};
  fenceInfo.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  VkFence rawFence;
  vkCreateFence(rawDevice, &fenceInfo, nullptr, &rawFence);
  vk::Fence fence(rawDevice, rawFence);

  const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, layers};
  auto submitAndWait = [&]() -> Status {
    VkSubmitInfo submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cb;
    if (auto s = vk::check(vkQueueSubmit(queue, 1, &submit, rawFence), "vkQueueSubmit"); !s) return s;
    vkWaitForFences(rawDevice, 1, &rawFence, VK_TRUE, 5000000000ull);
    vkResetFences(rawDevice, 1, &rawFence);
    return {};
  };
  const uint32_t sourceFamily = options.externalAcquire ? VK_QUEUE_FAMILY_EXTERNAL : VK_QUEUE_FAMILY_IGNORED;
  const uint32_t ownFamily = options.externalAcquire ? family : VK_QUEUE_FAMILY_IGNORED;
  if (options.writtenSource) {
    // Pseudo-random texels (xorshift), uploaded once; the source stays TRANSFER_SRC_OPTIMAL.
    const VkDeviceSize bytes = VkDeviceSize(width) * height * layers * 4;
    auto staging = vk::createHostBuffer(rawDevice, memoryProps, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
    if (!staging) return staging.error();
    uint32_t x = 2463534242u;
    auto* words = static_cast<uint32_t*>(staging.value().mapped);
    for (VkDeviceSize i = 0; i < bytes / 4; ++i) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      words[i] = x;
    }
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cb, &begin);
    VkImageMemoryBarrier barrier = toTransferDst(images[0].get(), range);
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0,
                         nullptr, 1, &barrier);
    VkBufferImageCopy upload{};
    upload.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, layers};
    upload.imageExtent = {width, height, 1};
    vkCmdCopyBufferToImage(cb, staging.value().buffer.get(), images[0].get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1,
                           &upload);
    barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = 0;
    barrier.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
    barrier.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    barrier.srcQueueFamilyIndex = ownFamily;  // released to EXTERNAL, as a client hands it over
    barrier.dstQueueFamilyIndex = sourceFamily;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0, nullptr, 0,
                         nullptr, 1, &barrier);
    vkEndCommandBuffer(cb);
    if (auto s = submitAndWait(); !s) return s.error();
  }
  std::optional<vk::DeviceBuffer> evict;  // written to push everything else out of the caches
  constexpr VkDeviceSize kEvictBytes = VkDeviceSize(256) << 20;
  if (options.coldCache) {
    auto buffer = vk::createBuffer(rawDevice, memoryProps, kEvictBytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                   VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (!buffer) return buffer.error();
    evict = std::move(buffer).value();
  }
  std::vector<double> samples;
  for (int i = 0; i < iterations; ++i) {
    if (i > 0 && options.spacing.count() > 0) std::this_thread::sleep_for(options.spacing);
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cb, &begin);
    vkCmdResetQueryPool(cb, rawQueries, 0, 2);
    if (evict) {
      vkCmdFillBuffer(cb, evict->buffer.get(), 0, kEvictBytes, uint32_t(i));
      VkMemoryBarrier filled{};
      filled.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
      filled.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &filled, 0,
                           nullptr, 0, nullptr);
    }
    std::array<VkImageMemoryBarrier, 2> barriers{};
    for (int k = 0; k < 2; ++k) {
      barriers[k] = {};
      barriers[k].sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
      barriers[k].srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
      barriers[k].dstAccessMask = k == 0 ? VK_ACCESS_TRANSFER_READ_BIT : VK_ACCESS_TRANSFER_WRITE_BIT;
      barriers[k].oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
      barriers[k].newLayout = k == 0 ? VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL : VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
      barriers[k].srcQueueFamilyIndex = barriers[k].dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
      barriers[k].image = images[k].get();
      barriers[k].subresourceRange = range;
    }
    if (options.writtenSource) {
      // Keep the source's texels: no transition, and (externalAcquire) the acquire half of the
      // hand-over from EXTERNAL, as the daemon's copy begins.
      barriers[0].srcAccessMask = 0;
      barriers[0].oldLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
      barriers[0].srcQueueFamilyIndex = sourceFamily;
      barriers[0].dstQueueFamilyIndex = ownFamily;
    }
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0, nullptr,
                         2, barriers.data());
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, rawQueries, 0);  // as the daemon measures
    VkImageCopy region{};
    region.srcSubresource = region.dstSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, layers};
    region.extent = {width, height, 1};
    vkCmdCopyImage(cb, images[0].get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, images[1].get(),
                   VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, rawQueries, 1);
    if (options.externalAcquire && options.writtenSource) {
      VkImageMemoryBarrier release = barriers[0];
      release.srcAccessMask = 0;
      release.dstAccessMask = 0;
      release.oldLayout = release.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
      release.srcQueueFamilyIndex = family;
      release.dstQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
      vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0, nullptr, 0,
                           nullptr, 1, &release);
    }
    vkEndCommandBuffer(cb);
    if (auto s = submitAndWait(); !s) return s.error();
    std::array<uint64_t, 2> ticks{};
    if (vkGetQueryPoolResults(rawDevice, rawQueries, 0, 2, sizeof(ticks), ticks.data(), 8, VK_QUERY_RESULT_64_BIT) ==
            VK_SUCCESS &&
        ticks[1] >= ticks[0] && i > 0) {  // the first copy warms up
      samples.push_back(double(ticks[1] - ticks[0]) * props.limits.timestampPeriod / 1000.0);
    }
  }
  vkDeviceWaitIdle(rawDevice);
  return summarize(samples);
}

}  // namespace xrc::bench
