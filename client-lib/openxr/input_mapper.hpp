// Maps the controllers the daemon publishes (InputSnapshot, per hand: a device's interaction
// profile and its components) onto one session's actions, through the bindings its app suggested
// (OpenXR 1.0, chapter 11): which interaction profile is current per hand, what each action reads
// at xrSyncActions (booleans OR'ed, floats by largest magnitude, vector2s by longest), which
// sources it is bound to, where its pose actions are and where its haptics go. Pure logic; the
// session's mutex guards it.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "action_registry.hpp"
#include "xrc/input.hpp"

namespace xrc::openxr {

inline constexpr std::array<const char*, kHandCount> kHandUserPaths{"/user/hand/left", "/user/hand/right"};

struct ActionValue {
  bool active = false;
  float x = 0, y = 0;  // boolean: 0/1; float: x; vector2: x, y
  bool changedSinceLastSync = false;
  int64_t lastChangeNs = 0;  // CLOCK_MONOTONIC
};

// One bound source: a hand and a component of its device ("/input/select/click").
struct BoundSource {
  size_t hand = 0;
  std::string component;
  std::string path() const { return kHandUserPaths[hand] + component; }
};

class InputMapper {
 public:
  void setInput(InputSnapshot input) { input_ = std::move(input); }
  const InputSnapshot& input() const { return input_; }

  // The current interaction profile of each hand: the device's when the app suggested bindings
  // for it, else none. Returns true when one of them changed (XrEventDataInteractionProfileChanged).
  bool updateProfiles(const SuggestedBindings& suggested);
  const std::string& profile(size_t hand) const { return profiles_[hand]; }

  // The sources `action` reads for `subaction` ("" = all of them) in the current profiles.
  std::vector<BoundSource> sources(const Action& action, const std::string& subaction,
                                   const SuggestedBindings& suggested) const;

  // xrSyncActions for `actions`, with `subactions[i]` the declared subaction paths of actions[i].
  // Each (action, subaction) pair and the action as a whole ("") get their new state.
  void sync(const std::vector<const Action*>& actions, const std::vector<std::vector<std::string>>& subactions,
            const SuggestedBindings& suggested, int64_t nowNs);
  // Actions of sets not active at a sync read as inactive until a sync includes them again.
  void deactivate(const Action& action);
  // The state as of the last sync (inactive before the first, or when not synced then).
  ActionValue state(const Action& action, const std::string& subaction) const;

  // A pose action's pose in STAGE: its first source's grip or aim (left before right).
  std::optional<Pose> pose(const Action& action, const std::string& subaction,
                           const SuggestedBindings& suggested) const;

 private:
  std::optional<std::pair<float, float>> read(const BoundSource& source, XrActionType type, int64_t& changedNs) const;

  InputSnapshot input_;
  std::array<std::string, kHandCount> profiles_;
  std::map<std::pair<const Action*, std::string>, ActionValue> states_;
};

// "Left Hand", "Simple Controller", "Select Click": names an app may show for a source path.
std::string localizedUserPath(const std::string& userPath);
std::string localizedProfile(const std::string& profilePath);
std::string localizedComponent(const std::string& component);

}  // namespace xrc::openxr
