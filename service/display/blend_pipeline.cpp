#include "blend_pipeline.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "blend.comp.h"
#include "shape.comp.h"

namespace xrc {

namespace {
struct PushConstants {
  int32_t clip[4];
  int32_t target[4];
  int32_t source[4];
  int32_t arrayIndex;
  int32_t blend;
  int32_t unused[2];
  uint32_t color[4];
};
struct ShapePushConstants {
  int32_t clip[4];
  float tanFov[4];
  float eyeToLayer[4];
  float eyeInLayer[4];  // xyz, radius
  float shape[4];
  int32_t source[4];
  int32_t kind;
  int32_t arrayIndex;
  int32_t blend;
  int32_t unused;
  uint32_t color[4];
};
static_assert(sizeof(PushConstants) <= 128, "Vulkan guarantees 128 bytes of push constants");
static_assert(sizeof(ShapePushConstants) <= 128, "Vulkan guarantees 128 bytes of push constants");
constexpr uint32_t kGroupSize = 8;  // local_size_x/y in blend.comp and shape.comp

// IEEE half of `f` (round to nearest even), what GLSL's unpackHalf2x16 reads. Magnitudes beyond
// the half range saturate to its largest finite value: a color factor that large saturates the
// color anyway, and infinity would turn a zero texel into NaN.
uint16_t toHalf(float f) {
  f = std::clamp(f, -65504.f, 65504.f);
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int32_t exponent = int32_t((x >> 23) & 0xffu) - 127 + 15;
  uint32_t mantissa = x & 0x7fffffu;
  if (exponent <= 0) {  // a half subnormal, or zero
    if (exponent < -10) return uint16_t(sign);
    mantissa |= 0x800000u;
    const uint32_t shift = uint32_t(14 - exponent);
    uint32_t h = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (h & 1u))) h++;
    return uint16_t(sign | h);
  }
  uint32_t h = (uint32_t(exponent) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++;  // a carry rounds up into the exponent
  return uint16_t(sign | h);
}

void packColor(const LayerColor& color, uint32_t out[4]) {
  auto pack = [](float lo, float hi) { return uint32_t(toHalf(lo)) | (uint32_t(toHalf(hi)) << 16); };
  out[0] = pack(color.scale[0], color.scale[1]);
  out[1] = pack(color.scale[2], color.scale[3]);
  out[2] = pack(color.bias[0], color.bias[1]);
  out[3] = pack(color.bias[2], color.bias[3]);
}

// A compute pipeline of `spirv` with the one descriptor set layout and `pushSize` bytes of
// push constants.
Status makeComputePipeline(VkDevice device, VkDescriptorSetLayout setLayout, const uint32_t* spirv, size_t spirvBytes,
                           uint32_t pushSize, const char* name, vk::PipelineLayout& layoutOut,
                           vk::Pipeline& pipelineOut) {
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, pushSize};
  VkPipelineLayoutCreateInfo layoutInfo{};
  layoutInfo.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  layoutInfo.setLayoutCount = 1;
  layoutInfo.pSetLayouts = &setLayout;
  layoutInfo.pushConstantRangeCount = 1;
  layoutInfo.pPushConstantRanges = &range;
  VkPipelineLayout layout;
  if (auto s = vk::check(vkCreatePipelineLayout(device, &layoutInfo, nullptr, &layout), "vkCreatePipelineLayout"); !s) {
    return s;
  }
  layoutOut = vk::PipelineLayout(device, layout);
  VkShaderModuleCreateInfo moduleInfo{};
  moduleInfo.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  moduleInfo.codeSize = spirvBytes;
  moduleInfo.pCode = spirv;
  VkShaderModule module;
  if (auto s = vk::check(vkCreateShaderModule(device, &moduleInfo, nullptr, &module), "vkCreateShaderModule"); !s) {
    return s;
  }
  vk::ShaderModule moduleOwner(device, module);
  VkComputePipelineCreateInfo pipelineInfo{};
  pipelineInfo.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  pipelineInfo.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pipelineInfo.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pipelineInfo.stage.module = module;
  pipelineInfo.stage.pName = "main";
  pipelineInfo.layout = layout;
  VkPipeline pipeline;
  if (auto s = vk::check(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &pipelineInfo, nullptr, &pipeline), name);
      !s) {
    return s;
  }
  pipelineOut = vk::Pipeline(device, pipeline);
  return {};
}
}  // namespace

Result<BlendPipeline> BlendPipeline::create(VkDevice device, VkImageView displayView) {
  BlendPipeline p;
  p.device_ = device;
  p.displayView_ = displayView;

  VkSamplerCreateInfo samplerInfo{};
  samplerInfo.sType = VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO;
  samplerInfo.magFilter = VK_FILTER_NEAREST;
  samplerInfo.minFilter = VK_FILTER_NEAREST;
  samplerInfo.addressModeU = samplerInfo.addressModeV = samplerInfo.addressModeW =
      VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  VkSampler sampler;
  if (auto s = vk::check(vkCreateSampler(device, &samplerInfo, nullptr, &sampler), "vkCreateSampler"); !s) {
    return s.error();
  }
  p.sampler_ = vk::Sampler(device, sampler);

  VkDescriptorSetLayoutBinding bindings[2]{};
  bindings[0].binding = 0;
  bindings[0].descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
  bindings[0].descriptorCount = 1;
  bindings[0].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  bindings[1].binding = 1;
  bindings[1].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
  bindings[1].descriptorCount = 1;
  bindings[1].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  VkDescriptorSetLayoutCreateInfo setInfo{};
  setInfo.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  setInfo.bindingCount = 2;
  setInfo.pBindings = bindings;
  VkDescriptorSetLayout setLayout;
  if (auto s =
          vk::check(vkCreateDescriptorSetLayout(device, &setInfo, nullptr, &setLayout), "vkCreateDescriptorSetLayout");
      !s) {
    return s.error();
  }
  p.setLayout_ = vk::DescriptorSetLayout(device, setLayout);

  if (auto s = makeComputePipeline(device, setLayout, kBlendShaderSpirv, sizeof(kBlendShaderSpirv),
                                   sizeof(PushConstants), "vkCreateComputePipelines(blend)", p.layout_, p.pipeline_);
      !s) {
    return s.error();
  }
  if (auto s = makeComputePipeline(device, setLayout, kShapeShaderSpirv, sizeof(kShapeShaderSpirv),
                                   sizeof(ShapePushConstants), "vkCreateComputePipelines(shape)", p.shapeLayout_,
                                   p.shapePipeline_);
      !s) {
    return s.error();
  }

  VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, kMaxDrawsPerFrame},
                                   {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, kMaxDrawsPerFrame}};
  VkDescriptorPoolCreateInfo poolInfo{};
  poolInfo.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  poolInfo.maxSets = kMaxDrawsPerFrame;
  poolInfo.poolSizeCount = 2;
  poolInfo.pPoolSizes = sizes;
  VkDescriptorPool pool;
  if (auto s = vk::check(vkCreateDescriptorPool(device, &poolInfo, nullptr, &pool), "vkCreateDescriptorPool"); !s) {
    return s.error();
  }
  p.pool_ = vk::DescriptorPool(device, pool);
  return p;
}

Status BlendPipeline::beginFrame() {
  drawsThisFrame_ = 0;
  return vk::check(vkResetDescriptorPool(device_, pool_.get(), 0), "vkResetDescriptorPool");
}

Result<VkDescriptorSet> BlendPipeline::drawSet(VkImageView sourceView) {
  if (drawsThisFrame_ >= kMaxDrawsPerFrame) {
    return makeError(ErrorCode::exhausted, "more than {} blended layer views in one display frame", kMaxDrawsPerFrame);
  }
  VkDescriptorSetLayout setLayout = setLayout_.get();
  VkDescriptorSetAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  alloc.descriptorPool = pool_.get();
  alloc.descriptorSetCount = 1;
  alloc.pSetLayouts = &setLayout;
  VkDescriptorSet set;
  if (auto s = vk::check(vkAllocateDescriptorSets(device_, &alloc, &set), "vkAllocateDescriptorSets"); !s) {
    return s.error();
  }
  drawsThisFrame_++;
  VkDescriptorImageInfo source{sampler_.get(), sourceView, VK_IMAGE_LAYOUT_GENERAL};
  VkDescriptorImageInfo display{VK_NULL_HANDLE, displayView_, VK_IMAGE_LAYOUT_GENERAL};
  VkWriteDescriptorSet writes[2]{};
  for (auto& w : writes) {
    w.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    w.dstSet = set;
    w.descriptorCount = 1;
  }
  writes[0].dstBinding = 0;
  writes[0].descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
  writes[0].pImageInfo = &source;
  writes[1].dstBinding = 1;
  writes[1].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
  writes[1].pImageInfo = &display;
  vkUpdateDescriptorSets(device_, 2, writes, 0, nullptr);
  return set;
}

Status BlendPipeline::record(VkCommandBuffer cb, const ShapeDraw& draw) {
  auto set = drawSet(draw.source);
  if (!set) return set.error();
  VkDescriptorSet descriptors = set.value();
  ShapePushConstants c{};
  const int32_t clip[4] = {draw.eyeX0, draw.eyeY0, draw.eyeX1, draw.eyeY1};
  std::copy(std::begin(clip), std::end(clip), c.clip);
  std::copy(std::begin(draw.tanFov), std::end(draw.tanFov), c.tanFov);
  std::copy(std::begin(draw.eyeToLayer), std::end(draw.eyeToLayer), c.eyeToLayer);
  std::copy(std::begin(draw.eyeInLayer), std::end(draw.eyeInLayer), c.eyeInLayer);
  c.eyeInLayer[3] = draw.radius;
  std::copy(std::begin(draw.shape), std::end(draw.shape), c.shape);
  const int32_t source[4] = {draw.srcX, draw.srcY, draw.srcW, draw.srcH};
  std::copy(std::begin(source), std::end(source), c.source);
  c.kind = int32_t(draw.kind);
  c.arrayIndex = int32_t(draw.arrayIndex);
  c.blend = draw.blend;
  packColor(draw.color, c.color);
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, shapePipeline_.get());
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, shapeLayout_.get(), 0, 1, &descriptors, 0, nullptr);
  vkCmdPushConstants(cb, shapeLayout_.get(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(c), &c);
  const uint32_t w = uint32_t(draw.eyeX1 - draw.eyeX0), h = uint32_t(draw.eyeY1 - draw.eyeY0);
  vkCmdDispatch(cb, (w + kGroupSize - 1) / kGroupSize, (h + kGroupSize - 1) / kGroupSize, 1);
  return {};
}

Status BlendPipeline::record(VkCommandBuffer cb, const BlendDraw& draw) {
  auto drawn = drawSet(draw.source);
  if (!drawn) return drawn.error();
  VkDescriptorSet set = drawn.value();
  PushConstants constants{{draw.clipX0, draw.clipY0, draw.clipX1, draw.clipY1},
                          {draw.targetX, draw.targetY, draw.targetW, draw.targetH},
                          {draw.srcX, draw.srcY, draw.srcW, draw.srcH},
                          int32_t(draw.arrayIndex),
                          draw.blend,
                          {0, 0},
                          {}};
  packColor(draw.color, constants.color);
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_.get());
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout_.get(), 0, 1, &set, 0, nullptr);
  vkCmdPushConstants(cb, layout_.get(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(constants), &constants);
  const uint32_t w = uint32_t(draw.clipX1 - draw.clipX0), h = uint32_t(draw.clipY1 - draw.clipY0);
  vkCmdDispatch(cb, (w + kGroupSize - 1) / kGroupSize, (h + kGroupSize - 1) / kGroupSize, 1);
  return {};
}

}  // namespace xrc
