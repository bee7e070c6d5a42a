// The action API. No physical input source is bound here (the daemon has none to offer yet), so
// states are inactive, bound sources are empty and haptics go nowhere, exactly as OpenXR
// specifies for unbound actions; all parameters are validated as for a runtime with devices.
#include <algorithm>

#include "entry_points.hpp"
#include "interaction_profiles.hpp"

namespace xrc::openxr {

namespace {

struct SessionAction {
  std::shared_ptr<Session> session;
  std::shared_ptr<ActionObject> action;
  XrResult result = XR_SUCCESS;
};

// Resolves a state query's session and action; `expected` is the action type the call reads.
SessionAction resolve(XrSession sessionHandle, const XrActionStateGetInfo* info, const void* state,
                      XrStructureType stateType, XrActionType expected) {
  SessionAction out;
  out.session = lookup<Session>(sessionHandle);
  if (!out.session) return {nullptr, nullptr, XR_ERROR_HANDLE_INVALID};
  if (!hasType(info, XR_TYPE_ACTION_STATE_GET_INFO) || state == nullptr ||
      static_cast<const XrBaseInStructure*>(state)->type != stateType) {
    return {nullptr, nullptr, XR_ERROR_VALIDATION_FAILURE};
  }
  out.action = lookup<ActionObject>(info->action);
  if (!out.action || out.action->instance != out.session->instance || out.action->action->destroyed) {
    return {nullptr, nullptr, XR_ERROR_HANDLE_INVALID};
  }
  Lock lock(out.session->mutex);
  out.result = out.session->instance->actions.checkQuery(out.session->attachedSets, *out.action->action, expected,
                                                         info->subactionPath);
  return out;
}

}  // namespace

XrResult XRAPI_CALL CreateActionSet(XrInstance handle, const XrActionSetCreateInfo* info, XrActionSet* out) {
  auto instance = lookup<Instance>(handle);
  if (!instance) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_ACTION_SET_CREATE_INFO) || out == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  auto object = std::make_shared<ActionSetObject>();
  object->instance = instance;
  if (XrResult r = instance->actions.createActionSet(*info, object->set); XR_FAILED(r)) return r;
  const uint64_t raw = Handles::get().add(object);
  Lock lock(instance->mutex);
  instance->actionSetHandles.push_back(raw);
  *out = fromRaw<XrActionSet>(raw);
  return XR_SUCCESS;
}

XrResult XRAPI_CALL DestroyActionSet(XrActionSet handle) {
  auto object = lookup<ActionSetObject>(handle);
  if (!object) return XR_ERROR_HANDLE_INVALID;
  std::vector<uint64_t> actions;
  {
    Lock lock(object->instance->mutex);
    eraseHandle(object->instance->actionSetHandles, toRaw(handle));
    actions.swap(object->actionHandles);
  }
  for (uint64_t action : actions) Handles::get().remove(action);
  object->instance->actions.destroyActionSet(object->set);
  Handles::get().remove(toRaw(handle));
  return XR_SUCCESS;
}

XrResult XRAPI_CALL CreateAction(XrActionSet handle, const XrActionCreateInfo* info, XrAction* out) {
  auto set = lookup<ActionSetObject>(handle);
  if (!set) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_ACTION_CREATE_INFO) || out == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  auto object = std::make_shared<ActionObject>();
  object->instance = set->instance;
  if (XrResult r = set->instance->actions.createAction(*set->set, *info, object->action); XR_FAILED(r)) return r;
  const uint64_t raw = Handles::get().add(object);
  Lock lock(set->instance->mutex);
  set->actionHandles.push_back(raw);
  *out = fromRaw<XrAction>(raw);
  return XR_SUCCESS;
}

XrResult XRAPI_CALL DestroyAction(XrAction handle) {
  auto object = lookup<ActionObject>(handle);
  if (!object) return XR_ERROR_HANDLE_INVALID;
  object->instance->actions.destroyAction(object->action);
  Handles::get().remove(toRaw(handle));
  return XR_SUCCESS;
}

XrResult XRAPI_CALL SuggestInteractionProfileBindings(XrInstance handle,
                                                      const XrInteractionProfileSuggestedBinding* suggested) {
  auto instance = lookup<Instance>(handle);
  if (!instance) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(suggested, XR_TYPE_INTERACTION_PROFILE_SUGGESTED_BINDING)) return XR_ERROR_VALIDATION_FAILURE;
  if (suggested->countSuggestedBindings == 0 || suggested->suggestedBindings == nullptr) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  std::vector<std::shared_ptr<ActionObject>> keep;
  std::vector<const Action*> actions;
  std::vector<XrPath> bindings;
  for (uint32_t i = 0; i < suggested->countSuggestedBindings; ++i) {
    auto action = lookup<ActionObject>(suggested->suggestedBindings[i].action);
    if (!action || action->instance != instance || action->action->destroyed) return XR_ERROR_HANDLE_INVALID;
    actions.push_back(action->action.get());
    bindings.push_back(suggested->suggestedBindings[i].binding);
    keep.push_back(std::move(action));
  }
  return instance->actions.suggestBindings(suggested->interactionProfile, actions, bindings);
}

XrResult XRAPI_CALL AttachSessionActionSets(XrSession handle, const XrSessionActionSetsAttachInfo* info) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_SESSION_ACTION_SETS_ATTACH_INFO) || info->countActionSets == 0 ||
      info->actionSets == nullptr) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  std::vector<std::shared_ptr<ActionSet>> keep;
  std::vector<ActionSet*> sets;
  for (uint32_t i = 0; i < info->countActionSets; ++i) {
    auto set = lookup<ActionSetObject>(info->actionSets[i]);
    if (!set || set->instance != session->instance) return XR_ERROR_HANDLE_INVALID;
    sets.push_back(set->set.get());
    keep.push_back(set->set);
  }
  Lock lock(session->mutex);
  if (XrResult r = session->instance->actions.attach(sets, session->attachedSets); XR_FAILED(r)) return r;
  session->attachedSetsKeepAlive = std::move(keep);
  return XR_SUCCESS;
}

XrResult XRAPI_CALL GetCurrentInteractionProfile(XrSession handle, XrPath topLevelUserPath,
                                                 XrInteractionProfileState* state) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(state, XR_TYPE_INTERACTION_PROFILE_STATE)) return XR_ERROR_VALIDATION_FAILURE;
  std::string text;
  if (session->instance->paths.toString(topLevelUserPath, text) != XR_SUCCESS) return XR_ERROR_PATH_INVALID;
  if (!isTopLevelUserPath(text)) return XR_ERROR_PATH_UNSUPPORTED;
  Lock lock(session->mutex);
  if (session->attachedSets.empty()) return XR_ERROR_ACTIONSET_NOT_ATTACHED;
  state->interactionProfile = XR_NULL_PATH;  // no device, so no profile is current
  return XR_SUCCESS;
}

namespace {
// Nothing is bound, so every input reads as inactive with its zero value (OpenXR 11.5).
template <typename State, typename Value>
XrResult inactiveState(XrSession session, const XrActionStateGetInfo* info, State* state, XrStructureType stateType,
                       XrActionType actionType, Value zero) {
  auto r = resolve(session, info, state, stateType, actionType);
  if (XR_FAILED(r.result)) return r.result;
  state->currentState = zero;
  state->changedSinceLastSync = XR_FALSE;
  state->lastChangeTime = 0;
  state->isActive = XR_FALSE;
  return XR_SUCCESS;
}
}  // namespace

XrResult XRAPI_CALL GetActionStateBoolean(XrSession session, const XrActionStateGetInfo* info,
                                          XrActionStateBoolean* state) {
  return inactiveState(session, info, state, XR_TYPE_ACTION_STATE_BOOLEAN, XR_ACTION_TYPE_BOOLEAN_INPUT, XrBool32(XR_FALSE));
}

XrResult XRAPI_CALL GetActionStateFloat(XrSession session, const XrActionStateGetInfo* info,
                                        XrActionStateFloat* state) {
  return inactiveState(session, info, state, XR_TYPE_ACTION_STATE_FLOAT, XR_ACTION_TYPE_FLOAT_INPUT, 0.0f);
}

XrResult XRAPI_CALL GetActionStateVector2f(XrSession session, const XrActionStateGetInfo* info,
                                           XrActionStateVector2f* state) {
  return inactiveState(session, info, state, XR_TYPE_ACTION_STATE_VECTOR2F, XR_ACTION_TYPE_VECTOR2F_INPUT,
                       XrVector2f{0, 0});
}

XrResult XRAPI_CALL GetActionStatePose(XrSession session, const XrActionStateGetInfo* info,
                                       XrActionStatePose* state) {
  auto r = resolve(session, info, state, XR_TYPE_ACTION_STATE_POSE, XR_ACTION_TYPE_POSE_INPUT);
  if (XR_FAILED(r.result)) return r.result;
  state->isActive = XR_FALSE;
  return XR_SUCCESS;
}

XrResult XRAPI_CALL SyncActions(XrSession handle, const XrActionsSyncInfo* info) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_ACTIONS_SYNC_INFO)) return XR_ERROR_VALIDATION_FAILURE;
  if (info->countActiveActionSets > 0 && info->activeActionSets == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  CallTimer timer(session->stats.get(), Call::syncActions);
  Lock lock(session->mutex);
  if (session->lifecycle.lost()) return XR_ERROR_SESSION_LOST;
  for (uint32_t i = 0; i < info->countActiveActionSets; ++i) {
    auto set = lookup<ActionSetObject>(info->activeActionSets[i].actionSet);
    if (!set || set->instance != session->instance) return XR_ERROR_HANDLE_INVALID;
    if (XrResult r = session->instance->actions.checkSync(session->attachedSets, *set->set,
                                                          info->activeActionSets[i].subactionPath);
        XR_FAILED(r)) {
      return r;
    }
  }
  return session->lifecycle.state() == XR_SESSION_STATE_FOCUSED ? XR_SUCCESS : XR_SESSION_NOT_FOCUSED;
}

XrResult XRAPI_CALL EnumerateBoundSourcesForAction(XrSession handle, const XrBoundSourcesForActionEnumerateInfo* info,
                                                   uint32_t capacity, uint32_t* count, XrPath* sources) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_BOUND_SOURCES_FOR_ACTION_ENUMERATE_INFO)) return XR_ERROR_VALIDATION_FAILURE;
  auto action = lookup<ActionObject>(info->action);
  if (!action || action->instance != session->instance || action->action->destroyed) return XR_ERROR_HANDLE_INVALID;
  {
    Lock lock(session->mutex);
    const auto& attached = session->attachedSets;
    if (std::find(attached.begin(), attached.end(), action->action->set) == attached.end()) {
      return XR_ERROR_ACTIONSET_NOT_ATTACHED;
    }
  }
  return enumerate(std::vector<XrPath>{}, capacity, count, sources);
}

XrResult XRAPI_CALL GetInputSourceLocalizedName(XrSession handle, const XrInputSourceLocalizedNameGetInfo* info,
                                                uint32_t, uint32_t*, char*) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_INPUT_SOURCE_LOCALIZED_NAME_GET_INFO)) return XR_ERROR_VALIDATION_FAILURE;
  constexpr XrInputSourceLocalizedNameFlags kAll = XR_INPUT_SOURCE_LOCALIZED_NAME_USER_PATH_BIT |
                                                   XR_INPUT_SOURCE_LOCALIZED_NAME_INTERACTION_PROFILE_BIT |
                                                   XR_INPUT_SOURCE_LOCALIZED_NAME_COMPONENT_BIT;
  if (info->whichComponents == 0 || (info->whichComponents & ~kAll) != 0) return XR_ERROR_VALIDATION_FAILURE;
  {
    Lock lock(session->mutex);
    if (session->attachedSets.empty()) return XR_ERROR_ACTIONSET_NOT_ATTACHED;
  }
  std::string text;
  if (session->instance->paths.toString(info->sourcePath, text) != XR_SUCCESS) return XR_ERROR_PATH_INVALID;
  // Only paths xrEnumerateBoundSourcesForAction returned are sources, and it returns none.
  return XR_ERROR_PATH_UNSUPPORTED;
}

namespace {
XrResult checkHaptic(XrSession handle, const XrHapticActionInfo* info, std::shared_ptr<Session>& session) {
  session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_HAPTIC_ACTION_INFO)) return XR_ERROR_VALIDATION_FAILURE;
  auto action = lookup<ActionObject>(info->action);
  if (!action || action->instance != session->instance || action->action->destroyed) return XR_ERROR_HANDLE_INVALID;
  Lock lock(session->mutex);
  if (XrResult r = session->instance->actions.checkQuery(session->attachedSets, *action->action,
                                                         XR_ACTION_TYPE_VIBRATION_OUTPUT, info->subactionPath);
      XR_FAILED(r)) {
    return r;
  }
  if (session->lifecycle.lost()) return XR_ERROR_SESSION_LOST;
  return session->lifecycle.state() == XR_SESSION_STATE_FOCUSED ? XR_SUCCESS : XR_SESSION_NOT_FOCUSED;
}
}  // namespace

XrResult XRAPI_CALL ApplyHapticFeedback(XrSession handle, const XrHapticActionInfo* info,
                                        const XrHapticBaseHeader* feedback) {
  std::shared_ptr<Session> session;
  if (!hasType(feedback, XR_TYPE_HAPTIC_VIBRATION)) {
    if (!lookup<Session>(handle)) return XR_ERROR_HANDLE_INVALID;
    return XR_ERROR_VALIDATION_FAILURE;
  }
  return checkHaptic(handle, info, session);  // nothing is bound: the vibration goes nowhere
}

XrResult XRAPI_CALL StopHapticFeedback(XrSession handle, const XrHapticActionInfo* info) {
  std::shared_ptr<Session> session;
  return checkHaptic(handle, info, session);
}

}  // namespace xrc::openxr
