#include "session_state.hpp"

namespace xrc::openxr {

void SessionLifecycle::moveTo(XrSessionState next, StateList& out) {
  if (state_ == next) return;
  state_ = next;
  out.push_back(next);
}

void SessionLifecycle::created(StateList& out) {
  moveTo(XR_SESSION_STATE_IDLE, out);
  moveTo(XR_SESSION_STATE_READY, out);
}

XrResult SessionLifecycle::begin() {
  if (lost()) return XR_ERROR_SESSION_LOST;
  if (running_) return XR_ERROR_SESSION_RUNNING;
  if (state_ != XR_SESSION_STATE_READY) return XR_ERROR_SESSION_NOT_READY;
  running_ = true;
  return XR_SUCCESS;
}

void SessionLifecycle::frameWaited(bool visible, bool focused, StateList& out) {
  // After an exit request the session only goes down; the daemon's view no longer matters.
  if (!running_ || exitRequested_ || lost() || state_ == XR_SESSION_STATE_STOPPING) return;
  focused = focused && visible;
  // Walk the ladder SYNCHRONIZED < VISIBLE < FOCUSED one rung at a time, as the spec orders it.
  auto rung = [](XrSessionState s) {
    switch (s) {
      case XR_SESSION_STATE_VISIBLE:
        return 1;
      case XR_SESSION_STATE_FOCUSED:
        return 2;
      default:
        return 0;
    }
  };
  if (state_ == XR_SESSION_STATE_READY) moveTo(XR_SESSION_STATE_SYNCHRONIZED, out);
  const int target = focused ? 2 : visible ? 1 : 0;
  static constexpr XrSessionState kLadder[] = {XR_SESSION_STATE_SYNCHRONIZED, XR_SESSION_STATE_VISIBLE,
                                               XR_SESSION_STATE_FOCUSED};
  for (int r = rung(state_); r < target; ++r) moveTo(kLadder[r + 1], out);
  for (int r = rung(state_); r > target; --r) moveTo(kLadder[r - 1], out);
}

XrResult SessionLifecycle::requestExit(StateList& out) {
  if (lost()) return XR_ERROR_SESSION_LOST;
  if (!running_) return XR_ERROR_SESSION_NOT_RUNNING;
  exitRequested_ = true;
  // Before its first frame a running session is still READY; the ladder down to STOPPING starts
  // at SYNCHRONIZED, so it is passed through.
  if (state_ == XR_SESSION_STATE_READY) moveTo(XR_SESSION_STATE_SYNCHRONIZED, out);
  if (state_ == XR_SESSION_STATE_FOCUSED) moveTo(XR_SESSION_STATE_VISIBLE, out);
  if (state_ == XR_SESSION_STATE_VISIBLE) moveTo(XR_SESSION_STATE_SYNCHRONIZED, out);
  moveTo(XR_SESSION_STATE_STOPPING, out);
  return XR_SUCCESS;
}

XrResult SessionLifecycle::end(StateList& out) {
  if (lost()) return XR_ERROR_SESSION_LOST;
  if (!running_) return XR_ERROR_SESSION_NOT_RUNNING;
  if (state_ != XR_SESSION_STATE_STOPPING) return XR_ERROR_SESSION_NOT_STOPPING;
  running_ = false;
  moveTo(XR_SESSION_STATE_IDLE, out);
  if (exitRequested_) moveTo(XR_SESSION_STATE_EXITING, out);
  return XR_SUCCESS;
}

void SessionLifecycle::daemonStopping(StateList& out) {
  if (!running_ || lost() || exitRequested_) return;
  (void)requestExit(out);
}

void SessionLifecycle::lose(StateList& out) { moveTo(XR_SESSION_STATE_LOSS_PENDING, out); }

void FrameOrder::waited(uint64_t frameId, int64_t) { waited_ = frameId; }

XrResult FrameOrder::begin(uint64_t& frameId) {
  if (!waited_) return XR_ERROR_CALL_ORDER_INVALID;
  const bool discarded = begun_.has_value();
  begun_ = *waited_;
  waited_.reset();
  frameId = *begun_;
  return discarded ? XR_FRAME_DISCARDED : XR_SUCCESS;
}

XrResult FrameOrder::end(uint64_t& frameId) {
  if (!begun_) return XR_ERROR_CALL_ORDER_INVALID;
  frameId = *begun_;
  begun_.reset();
  return XR_SUCCESS;
}

void FrameOrder::reset() {
  waited_.reset();
  begun_.reset();
}

}  // namespace xrc::openxr
