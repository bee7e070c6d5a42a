// A desktop window on Wayland through xdg-shell, for the window output: a toplevel titled and
// sized by the daemon, resized and closed by the compositor (xdg_toplevel configure and close).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "native_window.hpp"
#include "xrc/result.hpp"

struct wl_display;
struct wl_registry;
struct wl_compositor;
struct wl_surface;
struct xdg_wm_base;
struct xdg_surface;
struct xdg_toplevel;

namespace xrc::present {

class WaylandWindow final : public NativeWindow {
  struct Key {};  // only open() constructs

 public:
  explicit WaylandWindow(Key) {}
  // Connects to $WAYLAND_DISPLAY and maps a toplevel of `width` x `height` (the compositor may
  // configure another size).
  static Result<std::unique_ptr<WaylandWindow>> open(const std::string& title, uint32_t width, uint32_t height);
  ~WaylandWindow() override;
  WaylandWindow(const WaylandWindow&) = delete;
  WaylandWindow& operator=(const WaylandWindow&) = delete;

  WindowSystem system() const override { return WindowSystem::wayland; }
  Result<VkSurfaceKHR> createSurface(VkInstance instance) override;
  WindowEvents poll() override;

  // The protocol's listeners (C callbacks) reach the window through these.
  void onGlobal(wl_registry* registry, uint32_t name, const char* interface, uint32_t version);
  void onToplevelConfigure(int32_t width, int32_t height);
  void onSurfaceConfigure(xdg_surface* surface, uint32_t serial);
  void onClose() { closeRequested_ = true; }

 private:
  // Reads and dispatches what the compositor sent, without blocking.
  void dispatch();

  wl_display* display_ = nullptr;
  wl_registry* registry_ = nullptr;
  wl_compositor* compositor_ = nullptr;
  xdg_wm_base* wmBase_ = nullptr;
  wl_surface* surface_ = nullptr;
  xdg_surface* xdgSurface_ = nullptr;
  xdg_toplevel* toplevel_ = nullptr;
  uint32_t width_ = 0, height_ = 0;
  uint32_t pendingWidth_ = 0, pendingHeight_ = 0;  // the toplevel's configure, applied on its ack
  bool configured_ = false;
  bool resized_ = false;         // since the last poll
  bool closeRequested_ = false;  // sticky
};

}  // namespace xrc::present
