// Where the display core's compositions go (think wlroots' wlr_output, Monado's comp_target): an
// output only says when its vsyncs are, gives the image to compose into, and shows each
// composition. The core owns the loop, the frame selection and the layer renderer; an output
// owns no client state.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <optional>

#include "../backends/backend.hpp"
#include "../gpu/gpu_device.hpp"
#include "../present/display_presenter.hpp"
#include "xrc/vk_util.hpp"

namespace xrc::display {

// The image every composition is recorded into: kOutputFormat with a storage view, the views side
// by side, TRANSFER_SRC_OPTIMAL once composed.
inline constexpr VkFormat kOutputFormat = VK_FORMAT_R8G8B8A8_UNORM;
struct OutputImage {
  VkImage image = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
  uint32_t width = 0, height = 0;
};

// An output image of `width` x `height` on the GPU, composable into and presentable.
struct OwnedOutputImage {
  vk::Memory memory;  // declared first: freed after the image and its view are destroyed
  vk::Image image;
  vk::ImageView view;
  uint32_t width = 0, height = 0;
  OutputImage get() const { return {image.get(), view.get(), width, height}; }
};
Result<OwnedOutputImage> createOutputImage(gpu::GpuDevice& gpu, uint32_t width, uint32_t height);

class Output {
 public:
  virtual ~Output() = default;
  // Any thread: the output's vsyncs.
  virtual DisplayClock clock() const = 0;
  virtual OutputImage image() const = 0;
  // Whether present() shows each composition to someone (a window); if not, the core may compose
  // only when its image is read.
  virtual bool showsCompositions() const = 0;
  // Display thread, once per display frame after the composition is submitted, and now and then
  // while the display sleeps with nothing to show (a window follows resizes and close requests):
  // `composed` is the image as last composed. Never waits long.
  virtual void present(const present::PresentSource& composed) = 0;
  // Once the display thread has stopped, before the image goes: waits (bounded) until nothing
  // the output submitted reads it any more.
  virtual void finish() = 0;
  // Any thread: the window's state where the output (or its mirror) is a window.
  virtual std::optional<present::PresenterStats> windowStats() const = 0;
};

}  // namespace xrc::display
