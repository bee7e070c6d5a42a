// The action API over the controllers the daemon publishes with each frame (InputMapper): the
// current interaction profile per hand, action states as of xrSyncActions, bound sources and their
// names, and haptics sent to the daemon. Actions bound to nothing the display has are inactive,
// as OpenXR specifies; all parameters are validated as for any runtime.
#include <algorithm>
#include <cmath>

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
  session->suggested = session->instance->actions.suggestions();
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
  state->interactionProfile = XR_NULL_PATH;
  for (size_t h = 0; h < kHandCount; ++h) {
    if (text == kHandUserPaths[h] && !session->input.profile(h).empty()) {
      state->interactionProfile = session->instance->paths.find(session->input.profile(h));
    }
  }
  return XR_SUCCESS;
}

namespace {
// The state of the action as of the last xrSyncActions (OpenXR 11.5), for the subaction path
// asked (XR_NULL_PATH: all of them).
template <typename State, typename Fill>
XrResult syncedState(XrSession session, const XrActionStateGetInfo* info, State* state, XrStructureType stateType,
                     XrActionType actionType, Fill fill) {
  auto r = resolve(session, info, state, stateType, actionType);
  if (XR_FAILED(r.result)) return r.result;
  Lock lock(r.session->mutex);
  const std::string subaction =
      info->subactionPath == XR_NULL_PATH ? std::string{} : r.session->instance->paths.stringOf(info->subactionPath);
  const ActionValue value = r.session->input.state(*r.action->action, subaction);
  fill(*state, value);
  state->changedSinceLastSync = value.changedSinceLastSync ? XR_TRUE : XR_FALSE;
  state->lastChangeTime = value.lastChangeNs;
  state->isActive = value.active ? XR_TRUE : XR_FALSE;
  return XR_SUCCESS;
}
}  // namespace

XrResult XRAPI_CALL GetActionStateBoolean(XrSession session, const XrActionStateGetInfo* info,
                                          XrActionStateBoolean* state) {
  return syncedState(
      session, info, state, XR_TYPE_ACTION_STATE_BOOLEAN, XR_ACTION_TYPE_BOOLEAN_INPUT,
      [](XrActionStateBoolean& s, const ActionValue& v) { s.currentState = v.x != 0 ? XR_TRUE : XR_FALSE; });
}

XrResult XRAPI_CALL GetActionStateFloat(XrSession session, const XrActionStateGetInfo* info,
                                        XrActionStateFloat* state) {
  return syncedState(session, info, state, XR_TYPE_ACTION_STATE_FLOAT, XR_ACTION_TYPE_FLOAT_INPUT,
                     [](XrActionStateFloat& s, const ActionValue& v) { s.currentState = v.x; });
}

XrResult XRAPI_CALL GetActionStateVector2f(XrSession session, const XrActionStateGetInfo* info,
                                           XrActionStateVector2f* state) {
  return syncedState(session, info, state, XR_TYPE_ACTION_STATE_VECTOR2F, XR_ACTION_TYPE_VECTOR2F_INPUT,
                     [](XrActionStateVector2f& s, const ActionValue& v) {
                       s.currentState = {v.x, v.y};
                     });
}

XrResult XRAPI_CALL GetActionStatePose(XrSession session, const XrActionStateGetInfo* info, XrActionStatePose* state) {
  auto r = resolve(session, info, state, XR_TYPE_ACTION_STATE_POSE, XR_ACTION_TYPE_POSE_INPUT);
  if (XR_FAILED(r.result)) return r.result;
  Lock lock(r.session->mutex);
  const std::string subaction =
      info->subactionPath == XR_NULL_PATH ? std::string{} : r.session->instance->paths.stringOf(info->subactionPath);
  state->isActive = r.session->input.state(*r.action->action, subaction).active ? XR_TRUE : XR_FALSE;
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
  // The active sets' actions read the daemon's input as of now; every other action (and all of
  // them while the session is not focused) is inactive until a sync includes it again.
  const bool focused = session->lifecycle.state() == XR_SESSION_STATE_FOCUSED;
  std::vector<const ActionSet*> active;
  for (uint32_t i = 0; focused && i < info->countActiveActionSets; ++i) {
    active.push_back(lookup<ActionSetObject>(info->activeActionSets[i].actionSet)->set.get());
  }
  noticeInteractionProfiles(*session);
  std::vector<const Action*> synced;
  std::vector<std::vector<std::string>> subactions;
  for (const ActionSet* set : session->attachedSets) {
    const bool isActive = std::find(active.begin(), active.end(), set) != active.end();
    for (const auto& action : set->actions) {
      if (!isActive) {
        session->input.deactivate(*action);
        continue;
      }
      synced.push_back(action.get());
      auto& names = subactions.emplace_back();
      for (XrPath path : action->subactionPaths) names.push_back(session->instance->paths.stringOf(path));
    }
  }
  session->input.sync(synced, subactions, session->suggested, monotonicNowNs());
  return focused ? XR_SUCCESS : XR_SESSION_NOT_FOCUSED;
}

XrResult XRAPI_CALL EnumerateBoundSourcesForAction(XrSession handle, const XrBoundSourcesForActionEnumerateInfo* info,
                                                   uint32_t capacity, uint32_t* count, XrPath* sources) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_BOUND_SOURCES_FOR_ACTION_ENUMERATE_INFO)) return XR_ERROR_VALIDATION_FAILURE;
  auto action = lookup<ActionObject>(info->action);
  if (!action || action->instance != session->instance || action->action->destroyed) return XR_ERROR_HANDLE_INVALID;
  std::vector<XrPath> paths;
  {
    Lock lock(session->mutex);
    const auto& attached = session->attachedSets;
    if (std::find(attached.begin(), attached.end(), action->action->set) == attached.end()) {
      return XR_ERROR_ACTIONSET_NOT_ATTACHED;
    }
    // The sources of the current interaction profiles (their paths were interned by the app's
    // suggestions, so they exist in the path table).
    for (const BoundSource& source : session->input.sources(*action->action, {}, session->suggested)) {
      const XrPath path = session->instance->paths.find(source.path());
      if (path != XR_NULL_PATH && std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
    }
  }
  return enumerate(paths, capacity, count, sources);
}

XrResult XRAPI_CALL GetInputSourceLocalizedName(XrSession handle, const XrInputSourceLocalizedNameGetInfo* info,
                                                uint32_t capacity, uint32_t* count, char* buffer) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_INPUT_SOURCE_LOCALIZED_NAME_GET_INFO)) return XR_ERROR_VALIDATION_FAILURE;
  constexpr XrInputSourceLocalizedNameFlags kAll = XR_INPUT_SOURCE_LOCALIZED_NAME_USER_PATH_BIT |
                                                   XR_INPUT_SOURCE_LOCALIZED_NAME_INTERACTION_PROFILE_BIT |
                                                   XR_INPUT_SOURCE_LOCALIZED_NAME_COMPONENT_BIT;
  if (info->whichComponents == 0 || (info->whichComponents & ~kAll) != 0) return XR_ERROR_VALIDATION_FAILURE;
  std::string text;
  if (session->instance->paths.toString(info->sourcePath, text) != XR_SUCCESS) return XR_ERROR_PATH_INVALID;
  std::string name;
  {
    Lock lock(session->mutex);
    if (session->attachedSets.empty()) return XR_ERROR_ACTIONSET_NOT_ATTACHED;
    // A source is a path xrEnumerateBoundSourcesForAction can return: a hand's component in its
    // current interaction profile.
    for (size_t h = 0; h < kHandCount && name.empty(); ++h) {
      const std::string hand = kHandUserPaths[h];
      const std::string& profile = session->input.profile(h);
      if (profile.empty() || text.compare(0, hand.size() + 1, hand + "/") != 0) continue;
      if (!isBindingPathOfProfile(profile, text, session->instance->actions.scope())) continue;
      std::vector<std::string> parts;
      if (info->whichComponents & XR_INPUT_SOURCE_LOCALIZED_NAME_USER_PATH_BIT)
        parts.push_back(localizedUserPath(hand));
      if (info->whichComponents & XR_INPUT_SOURCE_LOCALIZED_NAME_INTERACTION_PROFILE_BIT) {
        parts.push_back(localizedProfile(profile));
      }
      if (info->whichComponents & XR_INPUT_SOURCE_LOCALIZED_NAME_COMPONENT_BIT) {
        parts.push_back(localizedComponent(text.substr(hand.size())));
      }
      for (const auto& part : parts) name += (name.empty() ? "" : " ") + part;
    }
  }
  if (name.empty()) return XR_ERROR_PATH_UNSUPPORTED;
  return enumerateString(name, capacity, count, buffer);
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

namespace {
// The outputs the action is bound to in the current profiles, for the subaction path asked.
std::vector<BoundSource> hapticOutputs(Session& session, const XrHapticActionInfo& info) {
  auto action = lookup<ActionObject>(info.action);
  Lock lock(session.mutex);
  const std::string subaction =
      info.subactionPath == XR_NULL_PATH ? std::string{} : session.instance->paths.stringOf(info.subactionPath);
  auto sources = session.input.sources(*action->action, subaction, session.suggested);
  std::erase_if(sources, [](const BoundSource& s) { return s.component.compare(0, 8, "/output/") != 0; });
  return sources;
}
}  // namespace

XrResult XRAPI_CALL ApplyHapticFeedback(XrSession handle, const XrHapticActionInfo* info,
                                        const XrHapticBaseHeader* feedback) {
  std::shared_ptr<Session> session;
  if (!hasType(feedback, XR_TYPE_HAPTIC_VIBRATION)) {
    if (!lookup<Session>(handle)) return XR_ERROR_HANDLE_INVALID;
    return XR_ERROR_VALIDATION_FAILURE;
  }
  const auto& vibration = *reinterpret_cast<const XrHapticVibration*>(feedback);
  if (!std::isfinite(vibration.amplitude) || !std::isfinite(vibration.frequency) || vibration.frequency < 0 ||
      vibration.duration < XR_MIN_HAPTIC_DURATION) {
    if (!lookup<Session>(handle)) return XR_ERROR_HANDLE_INVALID;
    return XR_ERROR_VALIDATION_FAILURE;
  }
  XrResult r = checkHaptic(handle, info, session);
  if (r != XR_SUCCESS) return r;  // also XR_SESSION_NOT_FOCUSED: nothing vibrates then
  const HapticPulse pulse{vibration.duration, vibration.frequency, std::clamp(vibration.amplitude, 0.0f, 1.0f)};
  for (const BoundSource& output : hapticOutputs(*session, *info)) {
    // The daemon decides; a display without the output (or a focus lost meanwhile) only means
    // this pulse is not felt, which OpenXR does not report.
    (void)session->connection->applyHaptic(uint32_t(output.hand), output.component, pulse);
  }
  return XR_SUCCESS;
}

XrResult XRAPI_CALL StopHapticFeedback(XrSession handle, const XrHapticActionInfo* info) {
  std::shared_ptr<Session> session;
  XrResult r = checkHaptic(handle, info, session);
  if (r != XR_SUCCESS) return r;
  for (const BoundSource& output : hapticOutputs(*session, *info)) {
    (void)session->connection->stopHaptic(uint32_t(output.hand), output.component);
  }
  return XR_SUCCESS;
}

void noticeInteractionProfiles(Session& session) {
  if (session.attachedSets.empty()) return;
  if (!session.input.updateProfiles(session.suggested)) return;
  XrEventDataBuffer buffer{};
  auto& event = reinterpret_cast<XrEventDataInteractionProfileChanged&>(buffer);
  event.type = XR_TYPE_EVENT_DATA_INTERACTION_PROFILE_CHANGED;
  event.session = fromRaw<XrSession>(session.handle);
  session.instance->pushEvent(buffer);
}

}  // namespace xrc::openxr
