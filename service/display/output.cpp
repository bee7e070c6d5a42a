#include "output.hpp"

namespace xrc::display {

Result<OwnedOutputImage> createOutputImage(gpu::GpuDevice& gpu, uint32_t width, uint32_t height) {
  VkDevice device = gpu.device();
  VkImageCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
  info.imageType = VK_IMAGE_TYPE_2D;
  info.format = kOutputFormat;
  info.extent = {width, height, 1};
  info.mipLevels = 1;
  info.arrayLayers = 1;
  info.samples = VK_SAMPLE_COUNT_1_BIT;
  info.tiling = VK_IMAGE_TILING_OPTIMAL;
  // Composed by copies, blits and compute (storage); read back and presented by copies.
  info.usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_STORAGE_BIT;
  info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  OwnedOutputImage out;
  out.width = width;
  out.height = height;
  VkImage image = VK_NULL_HANDLE;
  if (auto s = vk::check(vkCreateImage(device, &info, nullptr, &image), "vkCreateImage(display)"); !s) return s.error();
  out.image = vk::Image(device, image);
  auto memory = vk::bindDeviceLocalMemory(device, gpu.memory(), image, "display");
  if (!memory) return memory.error();
  out.memory = std::move(memory).value();
  auto view = vk::createImageView(device, image, info.format, VK_IMAGE_VIEW_TYPE_2D, 1);
  if (!view) return view.error();
  out.view = std::move(view).value();
  return out;
}

}  // namespace xrc::display
