// Image layout transitions as the display's command buffers record them (composition, window
// presentation).
#pragma once

#include <vulkan/vulkan.h>

#include <vector>

namespace xrc::gpu {

inline VkImageMemoryBarrier imageBarrier(VkImage image, VkImageLayout from, VkImageLayout to, VkAccessFlags srcAccess,
                                         VkAccessFlags dstAccess, VkImageSubresourceRange range) {
  VkImageMemoryBarrier b{};
  b.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
  b.srcAccessMask = srcAccess;
  b.dstAccessMask = dstAccess;
  b.oldLayout = from;
  b.newLayout = to;
  b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.image = image;
  b.subresourceRange = range;
  return b;
}

inline void barrier(VkCommandBuffer cb, VkPipelineStageFlags src, VkPipelineStageFlags dst,
                    const std::vector<VkImageMemoryBarrier>& barriers) {
  if (barriers.empty()) return;
  vkCmdPipelineBarrier(cb, src, dst, 0, 0, nullptr, 0, nullptr, uint32_t(barriers.size()), barriers.data());
}

}  // namespace xrc::gpu
