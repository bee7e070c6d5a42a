// An image the layer renderer can read: what a runtime swapchain image becomes on the daemon's
// side of a display (the headless runtime's images, a pass-through backend's mirror copies).
// Written by copies, read by copies, blits and, for colour formats, by the blend shaders through a
// view of every layer of mip 0 as stored (sRGB formats through their UNORM twin).
#pragma once

#include <vulkan/vulkan.h>

#include "gpu_device.hpp"
#include "xrc/result.hpp"
#include "xrc/vk_util.hpp"

namespace xrc::gpu {

struct ComposableImage {
  vk::Memory memory;  // declared first: freed after the image and its view are destroyed
  vk::Image image;
  vk::ImageView view;  // colour formats only
  // As created, less its chained structures and queue family list.
  VkImageCreateInfo info{};
};

// `requested` is a client's swapchain description (format, size, layers, mips); the usage and
// sharing the daemon's reads need are added. `what` names the allocation in errors.
Result<ComposableImage> createComposableImage(GpuDevice& gpu, const VkImageCreateInfo& requested, const char* what);

// The format composition reads `format` as: texels as stored, like the copies do.
VkFormat storedFormat(VkFormat format);

}  // namespace xrc::gpu
