#include "blend_pipeline.hpp"

#include "blend.comp.h"

namespace xrc {

namespace {
struct PushConstants {
  int32_t clip[4];
  int32_t target[4];
  int32_t source[4];
  int32_t arrayIndex;
  int32_t unpremultiplied;
};
constexpr uint32_t kGroupSize = 8;  // local_size_x/y in blend.comp
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

  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants)};
  VkPipelineLayoutCreateInfo layoutInfo{};
  layoutInfo.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  layoutInfo.setLayoutCount = 1;
  layoutInfo.pSetLayouts = &setLayout;
  layoutInfo.pushConstantRangeCount = 1;
  layoutInfo.pPushConstantRanges = &range;
  VkPipelineLayout layout;
  if (auto s = vk::check(vkCreatePipelineLayout(device, &layoutInfo, nullptr, &layout), "vkCreatePipelineLayout"); !s) {
    return s.error();
  }
  p.layout_ = vk::PipelineLayout(device, layout);

  VkShaderModuleCreateInfo moduleInfo{};
  moduleInfo.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  moduleInfo.codeSize = sizeof(kBlendShaderSpirv);
  moduleInfo.pCode = kBlendShaderSpirv;
  VkShaderModule module;
  if (auto s = vk::check(vkCreateShaderModule(device, &moduleInfo, nullptr, &module), "vkCreateShaderModule"); !s) {
    return s.error();
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
  if (auto s = vk::check(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &pipelineInfo, nullptr, &pipeline),
                         "vkCreateComputePipelines(blend)");
      !s) {
    return s.error();
  }
  p.pipeline_ = vk::Pipeline(device, pipeline);

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

Status BlendPipeline::record(VkCommandBuffer cb, const BlendDraw& draw) {
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
  if (auto s = vk::check(vkAllocateDescriptorSets(device_, &alloc, &set), "vkAllocateDescriptorSets"); !s) return s;
  drawsThisFrame_++;

  VkDescriptorImageInfo source{sampler_.get(), draw.source, VK_IMAGE_LAYOUT_GENERAL};
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

  const PushConstants constants{{draw.clipX0, draw.clipY0, draw.clipX1, draw.clipY1},
                                {draw.targetX, draw.targetY, draw.targetW, draw.targetH},
                                {draw.srcX, draw.srcY, draw.srcW, draw.srcH},
                                int32_t(draw.arrayIndex),
                                draw.unpremultiplied ? 1 : 0};
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_.get());
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout_.get(), 0, 1, &set, 0, nullptr);
  vkCmdPushConstants(cb, layout_.get(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(constants), &constants);
  const uint32_t w = uint32_t(draw.clipX1 - draw.clipX0), h = uint32_t(draw.clipY1 - draw.clipY0);
  vkCmdDispatch(cb, (w + kGroupSize - 1) / kGroupSize, (h + kGroupSize - 1) / kGroupSize, 1);
  return {};
}

}  // namespace xrc
