// The action system of one instance (OpenXR 1.0, chapter 11) without any physical input source:
// names, subaction paths and suggested bindings are validated as the spec requires, attachment
// freezes action sets, and every state query answers "inactive" (nothing is bound), so apps that
// use input run unchanged.
#pragma once

#include <openxr/openxr.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "interaction_profiles.hpp"
#include "openxr_1_1.hpp"
#include "path_table.hpp"
#include "xrc/thread_annotations.hpp"

namespace xrc::openxr {

struct ActionSet;

struct Action {
  ActionSet* set = nullptr;  // the owning set outlives its actions (xrDestroyActionSet destroys them)
  std::string name, localizedName;
  XrActionType type = XR_ACTION_TYPE_BOOLEAN_INPUT;
  std::vector<XrPath> subactionPaths;
  bool destroyed = false;
};

struct ActionSet {
  std::string name, localizedName;
  uint32_t priority = 0;
  bool attached = false;  // attached to a session: immutable from then on
  std::vector<std::shared_ptr<Action>> actions;
};

// The bindings an app suggested, by interaction profile path (what the input mapper reads).
struct SuggestedBinding {
  const Action* action = nullptr;  // only compared: the suggestion may outlive the action
  std::string path;                // "/user/hand/left/input/select/click"
};
using SuggestedBindings = std::map<std::string, std::vector<SuggestedBinding>>;

class ActionRegistry {
 public:
  explicit ActionRegistry(PathTable& paths) : paths_(paths) {}
  // The instance's API version and extensions: which interaction profiles and components exist
  // for its app.
  // Set once, before the instance is published to other threads.
  void setScope(ProfileScope scope) { scope_ = std::move(scope); }
  const ProfileScope& scope() const { return scope_; }

  XrResult createActionSet(const XrActionSetCreateInfo& info, std::shared_ptr<ActionSet>& out);
  void destroyActionSet(const std::shared_ptr<ActionSet>& set);
  XrResult createAction(ActionSet& set, const XrActionCreateInfo& info, std::shared_ptr<Action>& out);
  void destroyAction(const std::shared_ptr<Action>& action);
  // `actions[i]` is the resolved action handle of `bindings[i]`.
  XrResult suggestBindings(XrPath profile, const std::vector<const Action*>& actions,
                           const std::vector<XrPath>& bindings);
  // Once per session; `sessionAttached` is the session's list (must be empty).
  XrResult attach(const std::vector<ActionSet*>& sets, std::vector<ActionSet*>& sessionAttached);

  // State queries of a session: XR_ERROR_ACTIONSET_NOT_ATTACHED, XR_ERROR_ACTION_TYPE_MISMATCH,
  // XR_ERROR_PATH_UNSUPPORTED (subaction path not declared) or XR_ERROR_PATH_INVALID.
  XrResult checkQuery(const std::vector<ActionSet*>& sessionAttached, const Action& action, XrActionType expected,
                      XrPath subactionPath) const;
  // xrSyncActions: every active set attached; subaction paths declared by one of its actions.
  XrResult checkSync(const std::vector<ActionSet*>& sessionAttached, const ActionSet& set, XrPath subactionPath) const;

  size_t suggestedProfiles() const;
  // Every suggestion as path strings, by interaction profile (input_mapper.hpp).
  SuggestedBindings suggestions() const;

 private:
  PathTable& paths_;
  ProfileScope scope_;
  mutable Mutex mutex_;
  std::set<std::string> setNames_ XRC_GUARDED_BY(mutex_), setLocalizedNames_ XRC_GUARDED_BY(mutex_);
  std::map<XrPath, std::vector<std::pair<const Action*, XrPath>>> suggested_ XRC_GUARDED_BY(mutex_);
};

}  // namespace xrc::openxr
