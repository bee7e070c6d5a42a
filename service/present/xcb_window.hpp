// A desktop window on X11 through xcb, for the window output: titled, sized, closable by the
// window manager (WM_DELETE_WINDOW). Its events are polled, never waited for, on the display
// thread, which also presents to it.
#pragma once

#include <xcb/xcb.h>

#include <cstdint>
#include <memory>
#include <string>

#include "xrc/result.hpp"

namespace xrc::present {

// What happened to the window since the last poll.
struct WindowEvents {
  uint32_t width = 0, height = 0;  // its size now
  bool resized = false;
  bool closeRequested = false;  // once asked, every later poll says so too
};

class XcbWindow {
  struct Key {};  // only open() constructs

 public:
  explicit XcbWindow(Key) {}
  // Connects to $DISPLAY and maps a window of `width` x `height`.
  static Result<std::unique_ptr<XcbWindow>> open(const std::string& title, uint32_t width, uint32_t height);
  ~XcbWindow();
  XcbWindow(const XcbWindow&) = delete;
  XcbWindow& operator=(const XcbWindow&) = delete;

  xcb_connection_t* connection() const { return connection_.get(); }
  xcb_window_t window() const { return window_; }
  WindowEvents poll();

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
