#include "wayland_window.hpp"

#include <poll.h>
#include <vulkan/vulkan_wayland.h>
#include <wayland-client.h>

#include <cstdlib>
#include <string_view>

#include "xdg-shell-client-protocol.h"
#include "xrc/vk_util.hpp"

namespace xrc::present {

namespace {
// How many round trips the compositor gets to send the first configure.
constexpr int kMaxRoundTrips = 16;

WaylandWindow& self(void* data) { return *static_cast<WaylandWindow*>(data); }

const wl_registry_listener kRegistryListener = {
    [](void* data, wl_registry* registry, uint32_t name, const char* interface, uint32_t version) {
      self(data).onGlobal(registry, name, interface, version);
    },
    [](void*, wl_registry*, uint32_t) {},  // a global went away: nothing of ours depends on it
};

const xdg_wm_base_listener kWmBaseListener = {
    [](void*, xdg_wm_base* wmBase, uint32_t serial) { xdg_wm_base_pong(wmBase, serial); },
};

const xdg_surface_listener kSurfaceListener = {
    [](void* data, xdg_surface* surface, uint32_t serial) { self(data).onSurfaceConfigure(surface, serial); },
};

// Only version 1's events are bound; the later ones (configure_bounds, wm_capabilities) stay null.
xdg_toplevel_listener toplevelListener() {
  xdg_toplevel_listener l{};
  l.configure = [](void* data, xdg_toplevel*, int32_t width, int32_t height, wl_array*) {
    self(data).onToplevelConfigure(width, height);
  };
  l.close = [](void* data, xdg_toplevel*) { self(data).onClose(); };
  return l;
}
const xdg_toplevel_listener kToplevelListener = toplevelListener();
}  // namespace

void WaylandWindow::onGlobal(wl_registry* registry, uint32_t name, const char* interface, uint32_t version) {
  const std::string_view which(interface);
  if (which == wl_compositor_interface.name && compositor_ == nullptr) {
    compositor_ = static_cast<wl_compositor*>(wl_registry_bind(registry, name, &wl_compositor_interface, 1));
  } else if (which == xdg_wm_base_interface.name && wmBase_ == nullptr) {
    (void)version;
    wmBase_ = static_cast<xdg_wm_base*>(wl_registry_bind(registry, name, &xdg_wm_base_interface, 1));
    xdg_wm_base_add_listener(wmBase_, &kWmBaseListener, this);
  }
}

void WaylandWindow::onToplevelConfigure(int32_t width, int32_t height) {
  // 0 leaves the size to the client: keep ours.
  if (width > 0) pendingWidth_ = uint32_t(width);
  if (height > 0) pendingHeight_ = uint32_t(height);
}

void WaylandWindow::onSurfaceConfigure(xdg_surface* surface, uint32_t serial) {
  xdg_surface_ack_configure(surface, serial);
  configured_ = true;
  if (pendingWidth_ != width_ || pendingHeight_ != height_) {
    width_ = pendingWidth_;
    height_ = pendingHeight_;
    resized_ = true;
  }
}

Result<std::unique_ptr<WaylandWindow>> WaylandWindow::open(const std::string& title, uint32_t width, uint32_t height) {
  const char* name = std::getenv("WAYLAND_DISPLAY");
  if (name == nullptr || *name == '\0') {
    return makeError(ErrorCode::unsupported, "the window output on Wayland needs WAYLAND_DISPLAY, which is not set");
  }
  auto w = std::make_unique<WaylandWindow>(Key{});
  w->display_ = wl_display_connect(nullptr);
  if (w->display_ == nullptr)
    return makeError(ErrorCode::notFound, "cannot connect to the Wayland compositor '{}'", name);
  w->registry_ = wl_display_get_registry(w->display_);
  wl_registry_add_listener(w->registry_, &kRegistryListener, w.get());
  if (wl_display_roundtrip(w->display_) < 0) {
    return makeError(ErrorCode::notFound, "the Wayland compositor '{}' closed the connection", name);
  }
  if (w->compositor_ == nullptr || w->wmBase_ == nullptr) {
    return makeError(ErrorCode::unsupported, "the Wayland compositor '{}' offers no {}", name,
                     w->compositor_ == nullptr ? "wl_compositor" : "xdg_wm_base (xdg-shell)");
  }
  w->width_ = w->pendingWidth_ = width;
  w->height_ = w->pendingHeight_ = height;
  w->surface_ = wl_compositor_create_surface(w->compositor_);
  w->xdgSurface_ = xdg_wm_base_get_xdg_surface(w->wmBase_, w->surface_);
  xdg_surface_add_listener(w->xdgSurface_, &kSurfaceListener, w.get());
  w->toplevel_ = xdg_surface_get_toplevel(w->xdgSurface_);
  xdg_toplevel_add_listener(w->toplevel_, &kToplevelListener, w.get());
  xdg_toplevel_set_title(w->toplevel_, title.c_str());
  xdg_toplevel_set_app_id(w->toplevel_, "xr-compositor");
  wl_surface_commit(w->surface_);
  // xdg-shell: no buffer may be attached before the first configure is acknowledged.
  for (int i = 0; i < kMaxRoundTrips && !w->configured_; ++i) {
    if (wl_display_roundtrip(w->display_) < 0) {
      return makeError(ErrorCode::notFound, "the Wayland compositor '{}' closed the connection", name);
    }
  }
  if (!w->configured_)
    return makeError(ErrorCode::timeout, "the Wayland compositor '{}' never configured the window", name);
  w->resized_ = false;  // the size it starts with is no resize
  return w;
}

WaylandWindow::~WaylandWindow() {
  if (toplevel_ != nullptr) xdg_toplevel_destroy(toplevel_);
  if (xdgSurface_ != nullptr) xdg_surface_destroy(xdgSurface_);
  if (surface_ != nullptr) wl_surface_destroy(surface_);
  if (wmBase_ != nullptr) xdg_wm_base_destroy(wmBase_);
  if (compositor_ != nullptr) wl_compositor_destroy(compositor_);
  if (registry_ != nullptr) wl_registry_destroy(registry_);
  if (display_ != nullptr) {
    wl_display_flush(display_);
    wl_display_disconnect(display_);
  }
}

Result<VkSurfaceKHR> WaylandWindow::createSurface(VkInstance instance) {
  VkWaylandSurfaceCreateInfoKHR info{};
  info.sType = VK_STRUCTURE_TYPE_WAYLAND_SURFACE_CREATE_INFO_KHR;
  info.display = display_;
  info.surface = surface_;
  VkSurfaceKHR surface = VK_NULL_HANDLE;
  if (auto s = vk::check(vkCreateWaylandSurfaceKHR(instance, &info, nullptr, &surface), "vkCreateWaylandSurfaceKHR");
      !s) {
    return s.error();
  }
  return surface;
}

void WaylandWindow::dispatch() {
  // The usual non-blocking read: announce it, flush our requests, read only what is there.
  while (wl_display_prepare_read(display_) != 0) wl_display_dispatch_pending(display_);
  wl_display_flush(display_);
  pollfd fd{wl_display_get_fd(display_), POLLIN, 0};
  if (::poll(&fd, 1, 0) > 0 && (fd.revents & POLLIN) != 0) {
    wl_display_read_events(display_);
  } else {
    wl_display_cancel_read(display_);
  }
  wl_display_dispatch_pending(display_);
}

WindowEvents WaylandWindow::poll() {
  dispatch();
  // The compositor went away or refused a request: the window is as good as closed.
  if (wl_display_get_error(display_) != 0) closeRequested_ = true;
  WindowEvents out;
  out.width = width_;
  out.height = height_;
  out.resized = resized_;
  out.closeRequested = closeRequested_;
  resized_ = false;
  return out;
}

}  // namespace xrc::present
