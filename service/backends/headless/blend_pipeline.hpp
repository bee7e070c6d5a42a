// The headless display's alpha blending: a compute pipeline that blends one layer's sub-image
// over the display output (the layer_flags of protocol_rules.hpp). Opaque layers keep using
// plain copies. Display thread only.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

#include "xrc/result.hpp"
#include "xrc/vk_util.hpp"

namespace xrc {

struct BlendDraw {
  VkImageView source = VK_NULL_HANDLE;  // 2D array view of mip 0, read as stored (UNORM for sRGB)
  uint32_t arrayIndex = 0;
  int32_t srcX = 0, srcY = 0, srcW = 0, srcH = 0;              // the sub-image
  int32_t targetX = 0, targetY = 0, targetW = 0, targetH = 0;  // unclipped, output pixels
  int32_t clipX0 = 0, clipY0 = 0, clipX1 = 0, clipY1 = 0;      // pixels written
  bool unpremultiplied = false;
};

class BlendPipeline {
 public:
  // Most blended draws one display frame can record (descriptor sets are per draw).
  static constexpr uint32_t kMaxDrawsPerFrame = 1024;

  static Result<BlendPipeline> create(VkDevice device, VkImageView displayView);

  // Starts a display frame: the previous frame's submission must have completed.
  Status beginFrame();
  // Records one draw. The display image is in GENERAL layout, the source readable in GENERAL.
  Status record(VkCommandBuffer cb, const BlendDraw& draw);

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  VkImageView displayView_ = VK_NULL_HANDLE;
  vk::Sampler sampler_;
  vk::DescriptorSetLayout setLayout_;
  vk::PipelineLayout layout_;
  vk::Pipeline pipeline_;
  vk::DescriptorPool pool_;
  uint32_t drawsThisFrame_ = 0;
};

}  // namespace xrc
