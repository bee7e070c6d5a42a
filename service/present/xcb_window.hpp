// A desktop window on X11 through xcb, for the window output: titled, sized, closable by the
// window manager (WM_DELETE_WINDOW).
#pragma once

#include <xcb/xcb.h>

#include <cstdint>
#include <memory>
#include <string>

#include "native_window.hpp"
#include "xrc/result.hpp"

namespace xrc::present {

class XcbWindow final : public NativeWindow {
  struct Key {};  // only open() constructs

 public:
  explicit XcbWindow(Key) {}
  // Connects to $DISPLAY and maps a window of `width` x `height`.
  static Result<std::unique_ptr<XcbWindow>> open(const std::string& title, uint32_t width, uint32_t height);
  ~XcbWindow() override;
  XcbWindow(const XcbWindow&) = delete;
  XcbWindow& operator=(const XcbWindow&) = delete;

  WindowSystem system() const override { return WindowSystem::x11; }
  Result<VkSurfaceKHR> createSurface(VkInstance instance) override;
  WindowEvents poll() override;

 private:
  struct Disconnect {
    void operator()(xcb_connection_t* c) const { xcb_disconnect(c); }
  };
  std::unique_ptr<xcb_connection_t, Disconnect> connection_;
  xcb_window_t window_ = 0;
  xcb_atom_t protocols_ = 0, deleteWindow_ = 0;
  uint32_t width_ = 0, height_ = 0;
  bool closeRequested_ = false;  // sticky: a poll for the size alone must not lose it
};

}  // namespace xrc::present
