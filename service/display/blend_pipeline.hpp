// The layer renderer's compute drawing: blending one layer's sub-image over the display output
// (the layer_flags of protocol_rules.hpp; opaque quads and projections keep using plain copies
// unless they carry a color scale and bias), and drawing cylinder, equirect and cube layers
// (shaders/shape.comp). Display thread only.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

#include "../backends/backend.hpp"
#include "xrc/result.hpp"
#include "xrc/vk_util.hpp"

namespace xrc {

struct BlendDraw {
  VkImageView source = VK_NULL_HANDLE;  // 2D array view of mip 0, read as stored (UNORM for sRGB)
  uint32_t arrayIndex = 0;
  int32_t srcX = 0, srcY = 0, srcW = 0, srcH = 0;              // the sub-image
  int32_t targetX = 0, targetY = 0, targetW = 0, targetH = 0;  // unclipped, output pixels
  int32_t clipX0 = 0, clipY0 = 0, clipX1 = 0, clipY1 = 0;      // pixels written
  int32_t blend = 1;                                           // 0 opaque, 1 premultiplied, 2 unpremultiplied
  LayerColor color;                                            // to the shaders as half floats
};

// One eye's worth of a cylinder, equirect or cube layer, or of a reprojected projection view
// (see shaders/shape.comp).
struct ShapeDraw {
  VkImageView source = VK_NULL_HANDLE;
  uint32_t arrayIndex = 0;
  int32_t srcX = 0, srcY = 0, srcW = 0, srcH = 0;
  int32_t eyeX0 = 0, eyeY0 = 0, eyeX1 = 0, eyeY1 = 0;  // the eye's rectangle in the output
  float tanFov[4] = {};                                // left right up down
  float eyeToLayer[4] = {0, 0, 0, 1};                  // quaternion x y z w
  float eyeInLayer[3] = {};
  float radius = 0;  // 0: infinitely far
  float shape[4] = {};
  enum class Kind { cylinder = 0, equirect = 1, cube = 2, projection = 3 } kind = Kind::cylinder;
  int32_t blend = 0;  // 0 opaque, 1 premultiplied, 2 unpremultiplied
  LayerColor color;   // to the shaders as half floats
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
  Status record(VkCommandBuffer cb, const ShapeDraw& draw);

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  VkImageView displayView_ = VK_NULL_HANDLE;
  vk::Sampler sampler_;
  vk::DescriptorSetLayout setLayout_;
  vk::PipelineLayout layout_, shapeLayout_;
  vk::Pipeline pipeline_, shapePipeline_;
  vk::DescriptorPool pool_;
  uint32_t drawsThisFrame_ = 0;

  Result<VkDescriptorSet> drawSet(VkImageView source);
};

}  // namespace xrc
