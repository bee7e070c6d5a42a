// Small pieces the bench's references share: absolute sleeps on the monotonic clock and the
// Vulkan setup of a reference device (first GPU, plain RGBA8 images).
#pragma once

#include <vulkan/vulkan.h>

#include <cerrno>
#include <cstdint>
#include <ctime>

#include "xrc/result.hpp"
#include "xrc/vk_util.hpp"

namespace xrc::bench {

// Sleeps until CLOCK_MONOTONIC reaches `ns` (returns at once if it has).
inline void sleepUntilNs(int64_t ns) {
  timespec at{time_t(ns / 1000000000), long(ns % 1000000000)};
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {
  }
}

// A Vulkan instance of `apiVersion` in `instance`, and its first physical device.
inline Result<VkPhysicalDevice> createInstanceWithFirstDevice(vk::InstanceOwner& instance, uint32_t apiVersion) {
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.apiVersion = apiVersion;
  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pApplicationInfo = &app;
  VkInstance raw;
  if (auto s = vk::check(vkCreateInstance(&info, nullptr, &raw), "vkCreateInstance"); !s) return s.error();
  instance.reset(raw);
  uint32_t count = 1;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  vkEnumeratePhysicalDevices(raw, &count, &physical);
  if (physical == VK_NULL_HANDLE) return makeError(ErrorCode::unsupported, "no Vulkan device");
  return physical;
}

// A single-mip, optimally tiled 2D RGBA8 image of `layers` layers.
inline VkImageCreateInfo rgba8ImageInfo(uint32_t width, uint32_t height, uint32_t layers, VkImageUsageFlags usage) {
  VkImageCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
  info.imageType = VK_IMAGE_TYPE_2D;
  info.format = VK_FORMAT_R8G8B8A8_UNORM;
  info.extent = {width, height, 1};
  info.mipLevels = 1;
  info.arrayLayers = layers;
  info.samples = VK_SAMPLE_COUNT_1_BIT;
  info.tiling = VK_IMAGE_TILING_OPTIMAL;
  info.usage = usage;
  return info;
}

// A barrier that makes `image` (contents discarded) ready to be written by transfers.
inline VkImageMemoryBarrier toTransferDst(VkImage image, const VkImageSubresourceRange& range) {
  VkImageMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
  barrier.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  barrier.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
  barrier.srcQueueFamilyIndex = barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  barrier.image = image;
  barrier.subresourceRange = range;
  return barrier;
}

}  // namespace xrc::bench
