// Reference and action spaces, xrLocateSpace and xrLocateViews. Poses come from the daemon's
// system description (eyes, LOCAL, STAGE) and the head pose that every xrWaitFrame answer carries
// for its predicted display time, so locating for that time costs no round trip.
#include <algorithm>

#include "entry_points.hpp"

namespace xrc::openxr {

namespace {

// The reference spaces this session's app may use: LOCAL_FLOOR with OpenXR 1.1 or
// XR_EXT_local_floor. Any other value, known or not, is XR_ERROR_REFERENCE_SPACE_UNSUPPORTED.
std::vector<XrReferenceSpaceType> referenceSpacesOf(const Instance& instance) {
  std::vector<XrReferenceSpaceType> spaces{XR_REFERENCE_SPACE_TYPE_VIEW, XR_REFERENCE_SPACE_TYPE_LOCAL,
                                           XR_REFERENCE_SPACE_TYPE_STAGE};
  if (instance.hasLocalFloor()) spaces.push_back(XR_REFERENCE_SPACE_TYPE_LOCAL_FLOOR);
  return spaces;
}

bool isSupportedReferenceSpace(const Instance& instance, XrReferenceSpaceType type) {
  const auto spaces = referenceSpacesOf(instance);
  return std::find(spaces.begin(), spaces.end(), type) != spaces.end();
}

// Both spaces located: the pose of `space` in `base`, with velocities where asked for.
void locatedPose(const Pose& spaceInStage, const Pose& baseInStage, XrSpaceLocationFlags& flags, XrPosef& pose) {
  pose = toXr(compose(inverse(baseInStage), spaceInStage));
  flags = XR_SPACE_LOCATION_ORIENTATION_VALID_BIT | XR_SPACE_LOCATION_POSITION_VALID_BIT |
          XR_SPACE_LOCATION_ORIENTATION_TRACKED_BIT | XR_SPACE_LOCATION_POSITION_TRACKED_BIT;
}

// The backends' poses carry no velocity yet; the headless head is still, so zero is exact there.
void stillVelocity(XrSpaceVelocityFlags& flags, XrVector3f& linear, XrVector3f& angular) {
  linear = {0, 0, 0};
  angular = {0, 0, 0};
  flags = XR_SPACE_VELOCITY_LINEAR_VALID_BIT | XR_SPACE_VELOCITY_ANGULAR_VALID_BIT;
}

XrResult addSpace(const std::shared_ptr<Session>& session, std::shared_ptr<Space> space, XrSpace* out) {
  const uint64_t handle = Handles::get().add(std::move(space));
  Lock lock(session->mutex);
  session->childHandles.push_back(handle);
  *out = fromRaw<XrSpace>(handle);
  return XR_SUCCESS;
}

}  // namespace

XrResult XRAPI_CALL EnumerateReferenceSpaces(XrSession handle, uint32_t capacity, uint32_t* count,
                                             XrReferenceSpaceType* spaces) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  return enumerate(referenceSpacesOf(*session->instance), capacity, count, spaces);
}

XrResult XRAPI_CALL CreateReferenceSpace(XrSession handle, const XrReferenceSpaceCreateInfo* info, XrSpace* out) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_REFERENCE_SPACE_CREATE_INFO) || out == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  if (!isSupportedReferenceSpace(*session->instance, info->referenceSpaceType)) {
    return XR_ERROR_REFERENCE_SPACE_UNSUPPORTED;
  }
  const Pose offset = toPose(info->poseInReferenceSpace);
  if (!isValidPose(offset)) return XR_ERROR_POSE_INVALID;
  auto space = std::make_shared<Space>();
  space->session = session;
  space->referenceType = info->referenceSpaceType;
  space->offset = offset;
  space->offset.orientation = normalized(space->offset.orientation);
  return addSpace(session, std::move(space), out);
}

XrResult XRAPI_CALL GetReferenceSpaceBoundsRect(XrSession handle, XrReferenceSpaceType type, XrExtent2Df* bounds) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (bounds == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  if (!isSupportedReferenceSpace(*session->instance, type)) return XR_ERROR_REFERENCE_SPACE_UNSUPPORTED;
  const auto& system = session->instance->system;
  if (type == XR_REFERENCE_SPACE_TYPE_STAGE && system.stageBoundsWidth > 0 && system.stageBoundsDepth > 0) {
    *bounds = {system.stageBoundsWidth, system.stageBoundsDepth};
    return XR_SUCCESS;
  }
  *bounds = {0, 0};
  return XR_SPACE_BOUNDS_UNAVAILABLE;
}

XrResult XRAPI_CALL CreateActionSpace(XrSession handle, const XrActionSpaceCreateInfo* info, XrSpace* out) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_ACTION_SPACE_CREATE_INFO) || out == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  auto action = lookup<ActionObject>(info->action);
  if (!action || action->instance != session->instance || action->action->destroyed) return XR_ERROR_HANDLE_INVALID;
  if (action->action->type != XR_ACTION_TYPE_POSE_INPUT) return XR_ERROR_ACTION_TYPE_MISMATCH;
  if (info->subactionPath != XR_NULL_PATH) {
    std::string text;
    if (session->instance->paths.toString(info->subactionPath, text) != XR_SUCCESS) return XR_ERROR_PATH_INVALID;
    const auto& declared = action->action->subactionPaths;
    if (std::find(declared.begin(), declared.end(), info->subactionPath) == declared.end()) {
      return XR_ERROR_PATH_UNSUPPORTED;
    }
  }
  const Pose offset = toPose(info->poseInActionSpace);
  if (!isValidPose(offset)) return XR_ERROR_POSE_INVALID;
  auto space = std::make_shared<Space>();
  space->session = session;
  space->isAction = true;
  space->action = action->action;
  space->subactionPath = info->subactionPath;
  space->offset = offset;
  return addSpace(session, std::move(space), out);
}

XrResult XRAPI_CALL DestroySpace(XrSpace handle) {
  auto space = lookup<Space>(handle);
  if (!space) return XR_ERROR_HANDLE_INVALID;
  destroyChild(*space->session, toRaw(handle));
  return XR_SUCCESS;
}

XrResult XRAPI_CALL LocateSpace(XrSpace spaceHandle, XrSpace baseHandle, XrTime time, XrSpaceLocation* location) {
  auto space = lookup<Space>(spaceHandle);
  auto base = lookup<Space>(baseHandle);
  if (!space || !base) return XR_ERROR_HANDLE_INVALID;
  if (space->session != base->session) return XR_ERROR_VALIDATION_FAILURE;
  if (!hasType(location, XR_TYPE_SPACE_LOCATION)) return XR_ERROR_VALIDATION_FAILURE;
  if (time <= 0) return XR_ERROR_TIME_INVALID;
  auto velocity = static_cast<XrSpaceVelocity*>(const_cast<void*>(findInChain(location->next, XR_TYPE_SPACE_VELOCITY)));
  Session& session = *space->session;
  CallTimer timer(session.stats.get(), Call::locateSpace);
  Pose spacePose, basePose;
  bool spaceLocated = false, baseLocated = false;
  {
    Lock lock(session.mutex);
    if (session.lifecycle.lost()) return XR_ERROR_SESSION_LOST;
    if (XrResult r = spaceInStage(session, *space, time, spacePose, spaceLocated); XR_FAILED(r)) return r;
    if (XrResult r = spaceInStage(session, *base, time, basePose, baseLocated); XR_FAILED(r)) return r;
  }
  if (!spaceLocated || !baseLocated) {
    location->locationFlags = 0;
    location->pose = toXr(Pose{});
    if (velocity != nullptr) velocity->velocityFlags = 0;
    return XR_SUCCESS;
  }
  locatedPose(spacePose, basePose, location->locationFlags, location->pose);
  if (velocity != nullptr) stillVelocity(velocity->velocityFlags, velocity->linearVelocity, velocity->angularVelocity);
  return XR_SUCCESS;
}

XrResult XRAPI_CALL LocateSpaces(XrSession handle, const XrSpacesLocateInfo* info, XrSpaceLocations* locations) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_SPACES_LOCATE_INFO) || !hasType(locations, XR_TYPE_SPACE_LOCATIONS)) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  if (info->spaceCount == 0 || info->spaces == nullptr || locations->locations == nullptr ||
      locations->locationCount != info->spaceCount) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  auto velocities =
      static_cast<XrSpaceVelocities*>(const_cast<void*>(findInChain(locations->next, XR_TYPE_SPACE_VELOCITIES)));
  if (velocities != nullptr && (velocities->velocities == nullptr || velocities->velocityCount != info->spaceCount)) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  auto base = lookup<Space>(info->baseSpace);
  if (!base) return XR_ERROR_HANDLE_INVALID;
  std::vector<std::shared_ptr<Space>> spaces(info->spaceCount);
  for (uint32_t i = 0; i < info->spaceCount; ++i) {
    spaces[i] = lookup<Space>(info->spaces[i]);
    if (!spaces[i]) return XR_ERROR_HANDLE_INVALID;
  }
  for (const auto& space : spaces) {
    if (space->session != session) return XR_ERROR_VALIDATION_FAILURE;
  }
  if (base->session != session) return XR_ERROR_VALIDATION_FAILURE;
  if (info->time <= 0) return XR_ERROR_TIME_INVALID;
  CallTimer timer(session->stats.get(), Call::locateSpace);
  Lock lock(session->mutex);
  if (session->lifecycle.lost()) return XR_ERROR_SESSION_LOST;
  Pose basePose;
  bool baseLocated = false;
  if (XrResult r = spaceInStage(*session, *base, info->time, basePose, baseLocated); XR_FAILED(r)) return r;
  for (uint32_t i = 0; i < info->spaceCount; ++i) {
    Pose spacePose;
    bool located = false;
    if (XrResult r = spaceInStage(*session, *spaces[i], info->time, spacePose, located); XR_FAILED(r)) return r;
    XrSpaceLocationData& out = locations->locations[i];
    if (located && baseLocated) {
      locatedPose(spacePose, basePose, out.locationFlags, out.pose);
    } else {
      out.locationFlags = 0;
      out.pose = toXr(Pose{});
    }
    if (velocities != nullptr) {
      XrSpaceVelocityData& v = velocities->velocities[i];
      if (located && baseLocated) {
        stillVelocity(v.velocityFlags, v.linearVelocity, v.angularVelocity);
      } else {
        v.velocityFlags = 0;
      }
    }
  }
  return XR_SUCCESS;
}

XrResult XRAPI_CALL LocateViews(XrSession handle, const XrViewLocateInfo* info, XrViewState* viewState,
                                uint32_t capacity, uint32_t* count, XrView* views) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_VIEW_LOCATE_INFO) || !hasType(viewState, XR_TYPE_VIEW_STATE) || count == nullptr) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  if (info->viewConfigurationType != systemViewConfiguration(*session->instance)) {
    return XR_ERROR_VIEW_CONFIGURATION_TYPE_UNSUPPORTED;
  }
  if (info->displayTime <= 0) return XR_ERROR_TIME_INVALID;
  auto base = lookup<Space>(info->space);
  if (!base || base->session != session) return XR_ERROR_HANDLE_INVALID;
  const auto& described = session->instance->system.views;
  *count = uint32_t(described.size());
  if (capacity == 0) return XR_SUCCESS;
  if (views == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  if (capacity < described.size()) return XR_ERROR_SIZE_INSUFFICIENT;
  for (size_t i = 0; i < described.size(); ++i) {
    if (views[i].type != XR_TYPE_VIEW) return XR_ERROR_VALIDATION_FAILURE;
  }
  CallTimer timer(session->stats.get(), Call::locateViews);
  Pose head, basePose;
  bool baseLocated = false;
  std::vector<EyeView> eyes;
  {
    Lock lock(session->mutex);
    if (session->lifecycle.lost()) return XR_ERROR_SESSION_LOST;
    if (XrResult r = headPoseAt(*session, info->displayTime, head); XR_FAILED(r)) return r;
    if (XrResult r = spaceInStage(*session, *base, info->displayTime, basePose, baseLocated); XR_FAILED(r)) return r;
    eyes = session->views;
  }
  if (eyes.size() != described.size()) {
    eyes.clear();
    for (const auto& d : described) eyes.push_back(EyeView{d.eyeInHead, d.fov});
  }
  if (!baseLocated) {
    viewState->viewStateFlags = 0;
    for (size_t i = 0; i < described.size(); ++i) views[i].pose = toXr(Pose{});
    return XR_SUCCESS;
  }
  const Pose headInBase = compose(inverse(basePose), head);
  viewState->viewStateFlags = XR_VIEW_STATE_ORIENTATION_VALID_BIT | XR_VIEW_STATE_POSITION_VALID_BIT |
                              XR_VIEW_STATE_ORIENTATION_TRACKED_BIT | XR_VIEW_STATE_POSITION_TRACKED_BIT;
  for (size_t i = 0; i < described.size(); ++i) {
    views[i].pose = toXr(compose(headInBase, eyes[i].eyeInHead));
    views[i].fov = {eyes[i].fov[0], eyes[i].fov[1], eyes[i].fov[2], eyes[i].fov[3]};
  }
  return XR_SUCCESS;
}

}  // namespace xrc::openxr
