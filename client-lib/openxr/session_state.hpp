// OpenXR's session lifecycle and frame call order as plain state machines (no I/O), so that the
// rules are unit-tested apart from the daemon. Every transition appends the session states it
// passes through, in order, for the instance's event queue.
#pragma once

#include <openxr/openxr.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace xrc::openxr {

using StateList = std::vector<XrSessionState>;

class SessionLifecycle {
 public:
  XrSessionState state() const { return state_; }
  // Between a successful xrBeginSession and its xrEndSession.
  bool running() const { return running_; }
  bool exitRequested() const { return exitRequested_; }
  bool lost() const { return state_ == XR_SESSION_STATE_LOSS_PENDING; }

  // xrCreateSession: IDLE, then READY at once (the daemon can always take a session).
  void created(StateList& out);
  // XR_ERROR_SESSION_RUNNING, XR_ERROR_SESSION_NOT_READY or success.
  XrResult begin();
  // An xrWaitFrame answer: SYNCHRONIZED on the first one, then VISIBLE/FOCUSED as the daemon says.
  void frameWaited(bool visible, bool focused, StateList& out);
  // xrRequestExitSession: XR_ERROR_SESSION_NOT_RUNNING, or down to STOPPING.
  XrResult requestExit(StateList& out);
  // xrEndSession: XR_ERROR_SESSION_NOT_RUNNING / XR_ERROR_SESSION_NOT_STOPPING, or IDLE and
  // (after an exit request) EXITING.
  XrResult end(StateList& out);
  // The daemon is shutting down: as an exit request (down to STOPPING, then EXITING at
  // xrEndSession). Nothing when already stopping or not running.
  void daemonStopping(StateList& out);
  // The daemon went away: LOSS_PENDING, once.
  void lose(StateList& out);

 private:
  void moveTo(XrSessionState next, StateList& out);

  XrSessionState state_ = XR_SESSION_STATE_UNKNOWN;
  bool running_ = false;
  bool exitRequested_ = false;
};

// xrWaitFrame -> xrBeginFrame -> xrEndFrame order (OpenXR 1.0, 10.4).
class FrameOrder {
 public:
  void waited(uint64_t frameId, int64_t predictedDisplayTime);
  // XR_ERROR_CALL_ORDER_INVALID without a waited frame; XR_FRAME_DISCARDED when a begun frame
  // was never ended (it is dropped); else XR_SUCCESS. `frameId` is the frame now begun.
  XrResult begin(uint64_t& frameId);
  // XR_ERROR_CALL_ORDER_INVALID without a begun frame; else the frame ended.
  XrResult end(uint64_t& frameId);
  std::optional<uint64_t> begun() const { return begun_; }
  // A waited frame not begun yet: the next xrWaitFrame must wait for its xrBeginFrame.
  bool waitedNotBegun() const { return waited_.has_value(); }
  void reset();

 private:
  std::optional<uint64_t> waited_;
  std::optional<uint64_t> begun_;
};

}  // namespace xrc::openxr
