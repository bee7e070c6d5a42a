#include "runtime.hpp"

#include <cstdio>
#include <cstring>

namespace xrc::openxr {

void Instance::pushEvent(const XrEventDataBuffer& event) {
  Lock lock(mutex);
  // A bounded queue: an app that never polls must not grow it forever. The oldest events go
  // first; the spec lets a runtime drop events (XrEventDataEventsLost is not used by 1.0 apps).
  constexpr size_t kMaxEvents = 256;
  if (events.size() >= kMaxEvents) events.pop_front();
  events.push_back(event);
}

void Instance::dropSessionEvents(XrSession session) {
  Lock lock(mutex);
  // The session events this runtime queues all start like XrEventDataSessionStateChanged.
  auto aboutSession = [session](const XrEventDataBuffer& event) {
    if (event.type != XR_TYPE_EVENT_DATA_SESSION_STATE_CHANGED &&
        event.type != XR_TYPE_EVENT_DATA_REFERENCE_SPACE_CHANGE_PENDING &&
        event.type != XR_TYPE_EVENT_DATA_INTERACTION_PROFILE_CHANGED &&
        event.type != XR_TYPE_EVENT_DATA_USER_PRESENCE_CHANGED_EXT) {
      return false;
    }
    return reinterpret_cast<const XrEventDataSessionStateChanged&>(event).session == session;
  };
  events.erase(std::remove_if(events.begin(), events.end(), aboutSession), events.end());
}

XrResult toXrResult(const Error& error) {
  switch (error.code) {
    case ErrorCode::none:
      return XR_SUCCESS;
    case ErrorCode::invalidArgument:
      return XR_ERROR_VALIDATION_FAILURE;
    case ErrorCode::callOrder:
      return XR_ERROR_CALL_ORDER_INVALID;
    case ErrorCode::unsupported:
      return XR_ERROR_FEATURE_UNSUPPORTED;
    case ErrorCode::notFound:
      return XR_ERROR_HANDLE_INVALID;
    case ErrorCode::exhausted:
      return XR_ERROR_LIMIT_REACHED;
    case ErrorCode::timeout:
      return XR_TIMEOUT_EXPIRED;
    case ErrorCode::deviceMismatch:
      return XR_ERROR_GRAPHICS_DEVICE_INVALID;
    case ErrorCode::versionMismatch:
    case ErrorCode::permissionDenied:
    case ErrorCode::internal:
      return XR_ERROR_RUNTIME_FAILURE;
  }
  return XR_ERROR_RUNTIME_FAILURE;
}

void logError(const char* function, const std::string& message) {
  std::fprintf(stderr, "[xr-compositor runtime] %s: %s\n", function, message.c_str());
}

const void* findInChain(const void* next, XrStructureType type) {
  auto header = static_cast<const XrBaseInStructure*>(next);
  while (header != nullptr) {
    if (header->type == type) return header;
    header = header->next;
  }
  return nullptr;
}

XrResult enumerateString(const std::string& text, uint32_t capacity, uint32_t* count, char* out) {
  if (count == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  *count = uint32_t(text.size() + 1);
  if (capacity == 0) return XR_SUCCESS;
  if (out == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  if (capacity < text.size() + 1) return XR_ERROR_SIZE_INSUFFICIENT;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return XR_SUCCESS;
}

void destroyChild(Session& session, uint64_t handle) {
  {
    Lock lock(session.mutex);
    eraseHandle(session.childHandles, handle);
  }
  Handles::get().remove(handle);
}

void queueStates(Session& session, const StateList& states) {
  for (XrSessionState state : states) {
    XrEventDataBuffer buffer{};
    auto& event = reinterpret_cast<XrEventDataSessionStateChanged&>(buffer);
    event.type = XR_TYPE_EVENT_DATA_SESSION_STATE_CHANGED;
    event.session = fromRaw<XrSession>(session.handle);
    event.state = state;
    event.time = monotonicNowNs();
    session.instance->pushEvent(buffer);
  }
}

void noticeLoss(Session& session) {
  if (session.lifecycle.lost()) return;
  logError("session", "the connection to xr-compositord was lost");
  StateList states;
  session.lifecycle.lose(states);
  queueStates(session, states);
  Instance& instance = *session.instance;
  bool report = false;
  {
    Lock lock(instance.mutex);
    report = !instance.lossReported;
    instance.lossReported = true;
  }
  if (report) {
    XrEventDataBuffer buffer{};
    auto& event = reinterpret_cast<XrEventDataInstanceLossPending&>(buffer);
    event.type = XR_TYPE_EVENT_DATA_INSTANCE_LOSS_PENDING;
    event.lossTime = monotonicNowNs();
    instance.pushEvent(buffer);
  }
}

XrResult daemonCallFailed(Session& session, const char* function, const Error& error, bool appCallOrder) {
  const bool lost = session.connection->lost();
  if (lost) noticeLoss(session);
  if (appCallOrder && error.code == ErrorCode::callOrder) return XR_ERROR_CALL_ORDER_INVALID;
  if (lost) return XR_ERROR_SESSION_LOST;
  logError(function, error.describe());
  return toXrResult(error);
}

XrResult checkConnection(Session& session) {
  if (session.lifecycle.lost()) return XR_ERROR_SESSION_LOST;
  if (session.connection->lost()) {
    noticeLoss(session);
    return XR_ERROR_SESSION_LOST;
  }
  return XR_SUCCESS;
}

XrResult headPoseAt(Session& session, XrTime time, Pose& out) {
  for (auto it = session.headPoses.rbegin(); it != session.headPoses.rend(); ++it) {
    if (it->first == time) {
      out = it->second;
      return XR_SUCCESS;
    }
  }
  if (XrResult r = checkConnection(session); XR_FAILED(r)) return r;
  auto pose = session.connection->locateHead(time);
  if (!pose) return daemonCallFailed(session, "locate", pose.error());
  out = pose.value();
  return XR_SUCCESS;
}

XrResult spaceInStage(Session& session, const Space& space, XrTime time, Pose& out, bool& located) {
  located = false;
  if (space.isAction) {
    // Where the daemon last said the bound controller is (the frame's predicted display time;
    // poses are not extrapolated to other times). Unbound or untracked: not located.
    const std::string subaction =
        space.subactionPath == XR_NULL_PATH ? std::string{} : session.instance->paths.stringOf(space.subactionPath);
    const auto pose = session.input.pose(*space.action, subaction, session.suggested);
    if (!pose) return XR_SUCCESS;
    out = compose(*pose, space.offset);
    located = true;
    return XR_SUCCESS;
  }
  Pose reference;  // STAGE
  // An if chain, not a switch: LOCAL_FLOOR is not a value of the 1.0 headers' enum.
  if (space.referenceType == XR_REFERENCE_SPACE_TYPE_LOCAL) {
    reference = session.localInStage;
  } else if (space.referenceType == XR_REFERENCE_SPACE_TYPE_LOCAL_FLOOR) {
    reference = localFloorOf(session.localInStage);
  } else if (space.referenceType == XR_REFERENCE_SPACE_TYPE_VIEW) {
    if (XrResult r = headPoseAt(session, time, reference); XR_FAILED(r)) return r;
  } else if (space.referenceType != XR_REFERENCE_SPACE_TYPE_STAGE) {
    return XR_ERROR_RUNTIME_FAILURE;
  }
  out = compose(reference, space.offset);
  located = true;
  return XR_SUCCESS;
}

}  // namespace xrc::openxr
