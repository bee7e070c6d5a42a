#include "headless_output.hpp"

#include <cmath>

#include "xrc/monotonic_clock.hpp"

namespace xrc {

HeadlessOutput::HeadlessOutput(const HeadlessOutputOptions& options) : options_(options) {
  clock_.periodNs = int64_t(std::llround(1e9 / options_.refreshHz));
  clock_.originNs = monotonicNowNs();
}

Result<std::unique_ptr<HeadlessOutput>> HeadlessOutput::create(gpu::GpuDevice& gpu,
                                                               const HeadlessOutputOptions& options) {
  auto output = std::make_unique<HeadlessOutput>(options);
  VkDevice device = gpu.device();
  VkImageCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
  info.imageType = VK_IMAGE_TYPE_2D;
  info.format = display::kOutputFormat;
  info.extent = {options.width, options.height, 1};
  info.mipLevels = 1;
  info.arrayLayers = 1;
  info.samples = VK_SAMPLE_COUNT_1_BIT;
  info.tiling = VK_IMAGE_TILING_OPTIMAL;
  // Composed by copies, blits and compute (storage); read back and presented by copies.
  info.usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_STORAGE_BIT;
  info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  VkImage image;
  if (auto s = vk::check(vkCreateImage(device, &info, nullptr, &image), "vkCreateImage(display)"); !s) return s.error();
  output->image_ = vk::Image(device, image);
  auto memory = vk::bindDeviceLocalMemory(device, gpu.memory(), image, "display");
  if (!memory) return memory.error();
  output->memory_ = std::move(memory).value();
  auto view = vk::createImageView(device, image, info.format, VK_IMAGE_VIEW_TYPE_2D, 1);
  if (!view) return view.error();
  output->view_ = std::move(view).value();
  return output;
}

}  // namespace xrc
