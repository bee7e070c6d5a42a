#include "composable_image.hpp"

#include <vector>

namespace xrc::gpu {

VkFormat storedFormat(VkFormat format) {
  switch (format) {
    case VK_FORMAT_R8G8B8A8_SRGB:
      return VK_FORMAT_R8G8B8A8_UNORM;
    case VK_FORMAT_B8G8R8A8_SRGB:
      return VK_FORMAT_B8G8R8A8_UNORM;
    default:
      return format;
  }
}

Result<ComposableImage> createComposableImage(GpuDevice& gpu, const VkImageCreateInfo& requested, const char* what) {
  VkImageCreateInfo info = requested;
  info.pNext = nullptr;
  const bool color = !vk::isDepthFormat(requested.format);
  info.usage |= VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
  if (color) info.usage |= VK_IMAGE_USAGE_SAMPLED_BIT;
  // sRGB images are also viewed as their UNORM twin; the format list keeps them compressible.
  const VkFormat viewFormat = storedFormat(requested.format);
  const VkFormat formats[2] = {requested.format, viewFormat};
  VkImageFormatListCreateInfo formatList{};
  formatList.sType = VK_STRUCTURE_TYPE_IMAGE_FORMAT_LIST_CREATE_INFO;
  formatList.viewFormatCount = 2;
  formatList.pViewFormats = formats;
  if (color && viewFormat != requested.format) {
    info.flags |= VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT;
    info.pNext = &formatList;
  }
  const std::vector<uint32_t> families = gpu.queueFamilies();
  if (families.size() > 1) {
    info.sharingMode = VK_SHARING_MODE_CONCURRENT;
    info.queueFamilyIndexCount = uint32_t(families.size());
    info.pQueueFamilyIndices = families.data();
  } else {
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    info.queueFamilyIndexCount = 0;
    info.pQueueFamilyIndices = nullptr;
  }
  info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  // Host-mode copies into it may then run on the host (SharedSwapchain::hostCopy).
  if (gpu.hostTransferUsable(info, /*exportOpaqueFd=*/false)) info.usage |= VK_IMAGE_USAGE_HOST_TRANSFER_BIT_EXT;
  VkDevice device = gpu.device();
  ComposableImage out;
  VkImage image = VK_NULL_HANDLE;
  if (auto s = vk::check(vkCreateImage(device, &info, nullptr, &image), "vkCreateImage"); !s) {
    return makeError(s.error().code, "{} image: {}", what, s.error().message);
  }
  out.image = vk::Image(device, image);
  auto memory = vk::bindDeviceLocalMemory(device, gpu.memory(), image, what);
  if (!memory) return memory.error();
  out.memory = std::move(memory).value();
  if (color) {
    auto view = vk::createImageView(device, image, viewFormat, VK_IMAGE_VIEW_TYPE_2D_ARRAY, info.arrayLayers);
    if (!view) return view.error();
    out.view = std::move(view).value();
  }
  out.info = info;
  out.info.pNext = nullptr;
  out.info.queueFamilyIndexCount = 0;
  out.info.pQueueFamilyIndices = nullptr;
  return out;
}

}  // namespace xrc::gpu
