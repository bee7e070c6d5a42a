// A desktop window the window output presents to, on whichever window system the desktop runs:
// Wayland (xdg-shell) where WAYLAND_DISPLAY is set, else X11 (xcb) where DISPLAY is. Titled,
// sized, closable by the user. Its events are polled, never waited for, on the display thread,
// which also presents to it.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xrc/result.hpp"

namespace xrc::present {

// What happened to the window since the last poll.
struct WindowEvents {
  uint32_t width = 0, height = 0;  // its size now
  bool resized = false;
  bool closeRequested = false;  // once asked, every later poll says so too
};

enum class WindowSystem { wayland, x11 };

// Wayland where WAYLAND_DISPLAY is set, else X11 where DISPLAY is; an error naming both if neither.
Result<WindowSystem> windowSystemFromEnvironment();
const char* windowSystemName(WindowSystem system);
// The Vulkan instance extensions a surface on that window system needs.
std::vector<const char*> surfaceInstanceExtensions(WindowSystem system);

class NativeWindow {
 public:
  virtual ~NativeWindow() = default;
  virtual WindowSystem system() const = 0;
  // A Vulkan surface on the window; the caller destroys it before the window.
  virtual Result<VkSurfaceKHR> createSurface(VkInstance instance) = 0;
  virtual WindowEvents poll() = 0;
};

// Opens a window of `width` x `height` titled `title` on `system`.
Result<std::unique_ptr<NativeWindow>> openWindow(WindowSystem system, const std::string& title, uint32_t width,
                                                 uint32_t height);

}  // namespace xrc::present
