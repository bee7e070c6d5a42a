#include "xcb_window.hpp"

// xcb first: vulkan_xcb.h uses its types.
#include <vulkan/vulkan_xcb.h>

#include <cstdlib>
#include <cstring>

#include "xrc/vk_util.hpp"

namespace xrc::present {

namespace {
struct FreeReply {
  void operator()(void* p) const { std::free(p); }
};

xcb_atom_t internAtom(xcb_connection_t* c, const char* name) {
  std::unique_ptr<xcb_intern_atom_reply_t, FreeReply> reply(
      xcb_intern_atom_reply(c, xcb_intern_atom(c, 0, uint16_t(std::strlen(name)), name), nullptr));
  return reply ? reply->atom : xcb_atom_t(XCB_ATOM_NONE);
}
}  // namespace

Result<std::unique_ptr<XcbWindow>> XcbWindow::open(const std::string& title, uint32_t width, uint32_t height) {
  const char* display = std::getenv("DISPLAY");
  if (display == nullptr || *display == '\0') {
    return makeError(ErrorCode::unsupported, "the window output needs an X server, and DISPLAY is not set");
  }
  auto w = std::make_unique<XcbWindow>(Key{});
  int screenNumber = 0;
  w->connection_.reset(xcb_connect(nullptr, &screenNumber));
  if (int e = xcb_connection_has_error(w->connection_.get()); e != 0) {
    return makeError(ErrorCode::notFound, "cannot connect to the X server '{}' (xcb error {})", display, e);
  }
  xcb_connection_t* c = w->connection_.get();
  xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(c));
  for (int i = 0; i < screenNumber && it.rem > 0; ++i) xcb_screen_next(&it);
  if (it.rem == 0) return makeError(ErrorCode::notFound, "the X server '{}' has no screen {}", display, screenNumber);
  const xcb_screen_t* screen = it.data;

  w->window_ = xcb_generate_id(c);
  w->width_ = width;
  w->height_ = height;
  const uint32_t values[] = {screen->black_pixel, XCB_EVENT_MASK_STRUCTURE_NOTIFY};
  xcb_create_window(c, XCB_COPY_FROM_PARENT, w->window_, screen->root, 0, 0, uint16_t(width), uint16_t(height), 0,
                    XCB_WINDOW_CLASS_INPUT_OUTPUT, screen->root_visual, XCB_CW_BACK_PIXEL | XCB_CW_EVENT_MASK, values);
  xcb_change_property(c, XCB_PROP_MODE_REPLACE, w->window_, XCB_ATOM_WM_NAME, XCB_ATOM_STRING, 8,
                      uint32_t(title.size()), title.data());
  w->protocols_ = internAtom(c, "WM_PROTOCOLS");
  w->deleteWindow_ = internAtom(c, "WM_DELETE_WINDOW");
  if (w->protocols_ != XCB_ATOM_NONE && w->deleteWindow_ != XCB_ATOM_NONE) {
    xcb_change_property(c, XCB_PROP_MODE_REPLACE, w->window_, w->protocols_, XCB_ATOM_ATOM, 32, 1, &w->deleteWindow_);
  }
  xcb_map_window(c, w->window_);
  xcb_flush(c);
  if (xcb_connection_has_error(c) != 0) return makeError(ErrorCode::notFound, "the X server closed the connection");
  return w;
}

XcbWindow::~XcbWindow() {
  if (connection_ && window_ != 0) {
    xcb_destroy_window(connection_.get(), window_);
    xcb_flush(connection_.get());
  }
}

Result<VkSurfaceKHR> XcbWindow::createSurface(VkInstance instance) {
  VkXcbSurfaceCreateInfoKHR info{};
  info.sType = VK_STRUCTURE_TYPE_XCB_SURFACE_CREATE_INFO_KHR;
  info.connection = connection_.get();
  info.window = window_;
  VkSurfaceKHR surface = VK_NULL_HANDLE;
  if (auto s = vk::check(vkCreateXcbSurfaceKHR(instance, &info, nullptr, &surface), "vkCreateXcbSurfaceKHR"); !s) {
    return s.error();
  }
  return surface;
}

WindowEvents XcbWindow::poll() {
  WindowEvents out;
  xcb_connection_t* c = connection_.get();
  while (xcb_generic_event_t* raw = xcb_poll_for_event(c)) {
    std::unique_ptr<xcb_generic_event_t, FreeReply> event(raw);
    switch (event->response_type & 0x7f) {
      case XCB_CONFIGURE_NOTIFY: {
        const auto* e = reinterpret_cast<const xcb_configure_notify_event_t*>(raw);
        if (e->width != width_ || e->height != height_) {
          width_ = e->width;
          height_ = e->height;
          out.resized = true;
        }
        break;
      }
      case XCB_CLIENT_MESSAGE: {
        const auto* e = reinterpret_cast<const xcb_client_message_event_t*>(raw);
        if (deleteWindow_ != XCB_ATOM_NONE && e->type == protocols_ && e->data.data32[0] == deleteWindow_) {
          closeRequested_ = true;
        }
        break;
      }
      case XCB_DESTROY_NOTIFY:
        closeRequested_ = true;
        break;
      default:
        break;
    }
  }
  // The X server went away: the window is as good as closed.
  if (xcb_connection_has_error(c) != 0) closeRequested_ = true;
  out.closeRequested = closeRequested_;
  out.width = width_;
  out.height = height_;
  return out;
}

}  // namespace xrc::present
