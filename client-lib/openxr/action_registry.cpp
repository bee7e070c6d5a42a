#include "action_registry.hpp"

#include <algorithm>
#include <cstring>

#include "interaction_profiles.hpp"

namespace xrc::openxr {

namespace {
// Fixed-size char arrays: a string that fills the array without a terminator is invalid.
bool readName(const char* chars, size_t capacity, std::string& out) {
  const size_t length = strnlen(chars, capacity);
  if (length == capacity) return false;
  out.assign(chars, length);
  return true;
}

bool isValidActionType(XrActionType type) {
  switch (type) {
    case XR_ACTION_TYPE_BOOLEAN_INPUT:
    case XR_ACTION_TYPE_FLOAT_INPUT:
    case XR_ACTION_TYPE_VECTOR2F_INPUT:
    case XR_ACTION_TYPE_POSE_INPUT:
    case XR_ACTION_TYPE_VIBRATION_OUTPUT:
      return true;
    default:
      return false;
  }
}

bool isAttachedTo(const std::vector<ActionSet*>& sessionAttached, const ActionSet* set) {
  return std::find(sessionAttached.begin(), sessionAttached.end(), set) != sessionAttached.end();
}
}  // namespace

XrResult ActionRegistry::createActionSet(const XrActionSetCreateInfo& info, std::shared_ptr<ActionSet>& out) {
  auto set = std::make_shared<ActionSet>();
  if (!readName(info.actionSetName, XR_MAX_ACTION_SET_NAME_SIZE, set->name) || set->name.empty()) {
    return XR_ERROR_NAME_INVALID;
  }
  if (!isWellFormedName(set->name)) return XR_ERROR_PATH_FORMAT_INVALID;
  if (!readName(info.localizedActionSetName, XR_MAX_LOCALIZED_ACTION_SET_NAME_SIZE, set->localizedName) ||
      set->localizedName.empty()) {
    return XR_ERROR_LOCALIZED_NAME_INVALID;
  }
  set->priority = info.priority;
  Lock lock(mutex_);
  if (setNames_.count(set->name) != 0) return XR_ERROR_NAME_DUPLICATED;
  if (setLocalizedNames_.count(set->localizedName) != 0) return XR_ERROR_LOCALIZED_NAME_DUPLICATED;
  setNames_.insert(set->name);
  setLocalizedNames_.insert(set->localizedName);
  out = std::move(set);
  return XR_SUCCESS;
}

void ActionRegistry::destroyActionSet(const std::shared_ptr<ActionSet>& set) {
  Lock lock(mutex_);
  setNames_.erase(set->name);
  setLocalizedNames_.erase(set->localizedName);
  for (auto& action : set->actions) action->destroyed = true;
}

XrResult ActionRegistry::createAction(ActionSet& set, const XrActionCreateInfo& info, std::shared_ptr<Action>& out) {
  auto action = std::make_shared<Action>();
  if (!readName(info.actionName, XR_MAX_ACTION_NAME_SIZE, action->name) || action->name.empty()) {
    return XR_ERROR_NAME_INVALID;
  }
  if (!isWellFormedName(action->name)) return XR_ERROR_PATH_FORMAT_INVALID;
  if (!readName(info.localizedActionName, XR_MAX_LOCALIZED_ACTION_NAME_SIZE, action->localizedName) ||
      action->localizedName.empty()) {
    return XR_ERROR_LOCALIZED_NAME_INVALID;
  }
  if (!isValidActionType(info.actionType)) return XR_ERROR_VALIDATION_FAILURE;
  if (info.countSubactionPaths > 0 && info.subactionPaths == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  for (uint32_t i = 0; i < info.countSubactionPaths; ++i) {
    const XrPath p = info.subactionPaths[i];
    std::string text;
    if (paths_.toString(p, text) != XR_SUCCESS) return XR_ERROR_PATH_INVALID;
    if (!isTopLevelUserPath(text)) return XR_ERROR_PATH_UNSUPPORTED;
    if (std::count(action->subactionPaths.begin(), action->subactionPaths.end(), p) != 0) {
      return XR_ERROR_PATH_UNSUPPORTED;  // listed twice
    }
    action->subactionPaths.push_back(p);
  }
  action->type = info.actionType;
  Lock lock(mutex_);
  if (set.attached) return XR_ERROR_ACTIONSETS_ALREADY_ATTACHED;
  for (const auto& other : set.actions) {
    if (other->destroyed) continue;
    if (other->name == action->name) return XR_ERROR_NAME_DUPLICATED;
    if (other->localizedName == action->localizedName) return XR_ERROR_LOCALIZED_NAME_DUPLICATED;
  }
  action->set = &set;
  set.actions.push_back(action);
  out = std::move(action);
  return XR_SUCCESS;
}

void ActionRegistry::destroyAction(const std::shared_ptr<Action>& action) {
  Lock lock(mutex_);
  action->destroyed = true;
}

XrResult ActionRegistry::suggestBindings(XrPath profile, const std::vector<const Action*>& actions,
                                         const std::vector<XrPath>& bindings) {
  std::string profileText;
  if (paths_.toString(profile, profileText) != XR_SUCCESS) return XR_ERROR_PATH_INVALID;
  if (!isKnownInteractionProfile(profileText, scope_)) return XR_ERROR_PATH_UNSUPPORTED;
  if (bindings.empty()) return XR_ERROR_VALIDATION_FAILURE;
  std::vector<std::pair<const Action*, XrPath>> accepted;
  for (size_t i = 0; i < bindings.size(); ++i) {
    std::string bindingText;
    if (paths_.toString(bindings[i], bindingText) != XR_SUCCESS) return XR_ERROR_PATH_INVALID;
    if (!isBindingPathOfProfile(profileText, bindingText, scope_)) return XR_ERROR_PATH_UNSUPPORTED;
    accepted.emplace_back(actions[i], bindings[i]);
  }
  Lock lock(mutex_);
  for (const auto& [action, path] : accepted) {
    if (action->set->attached) return XR_ERROR_ACTIONSETS_ALREADY_ATTACHED;
  }
  suggested_[profile] = std::move(accepted);  // a later suggestion replaces the earlier one
  return XR_SUCCESS;
}

XrResult ActionRegistry::attach(const std::vector<ActionSet*>& sets, std::vector<ActionSet*>& sessionAttached) {
  if (sets.empty()) return XR_ERROR_VALIDATION_FAILURE;
  Lock lock(mutex_);
  if (!sessionAttached.empty()) return XR_ERROR_ACTIONSETS_ALREADY_ATTACHED;
  for (ActionSet* set : sets) set->attached = true;
  sessionAttached = sets;
  return XR_SUCCESS;
}

XrResult ActionRegistry::checkQuery(const std::vector<ActionSet*>& sessionAttached, const Action& action,
                                    XrActionType expected, XrPath subactionPath) const {
  if (!isAttachedTo(sessionAttached, action.set)) return XR_ERROR_ACTIONSET_NOT_ATTACHED;
  if (action.type != expected) return XR_ERROR_ACTION_TYPE_MISMATCH;
  if (subactionPath == XR_NULL_PATH) return XR_SUCCESS;
  std::string text;
  if (paths_.toString(subactionPath, text) != XR_SUCCESS) return XR_ERROR_PATH_INVALID;
  if (std::count(action.subactionPaths.begin(), action.subactionPaths.end(), subactionPath) == 0) {
    return XR_ERROR_PATH_UNSUPPORTED;
  }
  return XR_SUCCESS;
}

XrResult ActionRegistry::checkSync(const std::vector<ActionSet*>& sessionAttached, const ActionSet& set,
                                   XrPath subactionPath) const {
  if (!isAttachedTo(sessionAttached, &set)) return XR_ERROR_ACTIONSET_NOT_ATTACHED;
  if (subactionPath == XR_NULL_PATH) return XR_SUCCESS;
  std::string text;
  if (paths_.toString(subactionPath, text) != XR_SUCCESS) return XR_ERROR_PATH_INVALID;
  for (const auto& action : set.actions) {
    if (std::count(action->subactionPaths.begin(), action->subactionPaths.end(), subactionPath) != 0) {
      return XR_SUCCESS;
    }
  }
  return XR_ERROR_PATH_UNSUPPORTED;
}

size_t ActionRegistry::suggestedProfiles() const {
  Lock lock(mutex_);
  return suggested_.size();
}

SuggestedBindings ActionRegistry::suggestions() const {
  SuggestedBindings out;
  Lock lock(mutex_);
  for (const auto& [profile, bindings] : suggested_) {
    auto& list = out[paths_.stringOf(profile)];
    for (const auto& [action, binding] : bindings) list.push_back(SuggestedBinding{action, paths_.stringOf(binding)});
  }
  return out;
}

}  // namespace xrc::openxr
