#include "native_window.hpp"

#include <cstdlib>

#include "wayland_window.hpp"
#include "xcb_window.hpp"

namespace xrc::present {

namespace {
bool set(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0';
}
}  // namespace

Result<WindowSystem> windowSystemFromEnvironment() {
  if (set("WAYLAND_DISPLAY")) return WindowSystem::wayland;
  if (set("DISPLAY")) return WindowSystem::x11;
  return makeError(ErrorCode::unsupported,
                   "the window output needs a Wayland compositor or an X server, and neither WAYLAND_DISPLAY nor "
                   "DISPLAY is set");
}

const char* windowSystemName(WindowSystem system) { return system == WindowSystem::wayland ? "Wayland" : "X11"; }

std::vector<const char*> surfaceInstanceExtensions(WindowSystem system) {
  // By name: the platform headers that define them need each window system's own headers.
  if (system == WindowSystem::wayland) return {VK_KHR_SURFACE_EXTENSION_NAME, "VK_KHR_wayland_surface"};
  return {VK_KHR_SURFACE_EXTENSION_NAME, "VK_KHR_xcb_surface"};
}

Result<std::unique_ptr<NativeWindow>> openWindow(WindowSystem system, const std::string& title, uint32_t width,
                                                 uint32_t height) {
  if (system == WindowSystem::wayland) {
    auto window = WaylandWindow::open(title, width, height);
    if (!window) return window.error();
    return std::unique_ptr<NativeWindow>(std::move(window).value());
  }
  auto window = XcbWindow::open(title, width, height);
  if (!window) return window.error();
  return std::unique_ptr<NativeWindow>(std::move(window).value());
}

}  // namespace xrc::present
