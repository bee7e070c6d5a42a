#include "input_mapper.hpp"

#include <algorithm>
#include <cmath>

namespace xrc::openxr {

namespace {

// A click reads as pressed, and a value as a click, from half way.
constexpr float kPressThreshold = 0.5f;

bool startsWith(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

std::string capitalizedWords(std::string_view text) {
  std::string out;
  bool start = true;
  for (char c : text) {
    if (c == '_' || c == '/' || c == '-') {
      if (!out.empty() && out.back() != ' ') out += ' ';
      start = true;
      continue;
    }
    out += start && c >= 'a' && c <= 'z' ? char(c - 'a' + 'A') : c;
    start = false;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

bool InputMapper::updateProfiles(const SuggestedBindings& suggested) {
  bool changed = false;
  for (size_t h = 0; h < kHandCount; ++h) {
    const std::string& device = input_.hands[h].profile;
    std::string current = !device.empty() && suggested.count(device) > 0 ? device : std::string{};
    if (current != profiles_[h]) {
      profiles_[h] = std::move(current);
      changed = true;
    }
  }
  return changed;
}

std::vector<BoundSource> InputMapper::sources(const Action& action, const std::string& subaction,
                                              const SuggestedBindings& suggested) const {
  std::vector<BoundSource> out;
  for (size_t h = 0; h < kHandCount; ++h) {
    if (profiles_[h].empty()) continue;
    const std::string hand = kHandUserPaths[h];
    if (!subaction.empty() && subaction != hand) continue;
    auto it = suggested.find(profiles_[h]);
    if (it == suggested.end()) continue;
    for (const SuggestedBinding& b : it->second) {
      if (b.action != &action || !startsWith(b.path, hand + "/")) continue;
      out.push_back(BoundSource{h, b.path.substr(hand.size())});
    }
  }
  return out;
}

std::optional<std::pair<float, float>> InputMapper::read(const BoundSource& source, XrActionType type,
                                                         int64_t& changedNs) const {
  const HandInput& hand = input_.hands[source.hand];
  const std::string& c = source.component;
  auto value = [&](const InputComponentState* state) {
    if (state != nullptr) changedNs = std::max(changedNs, state->changedNs);
    return state != nullptr ? std::make_pair(state->x, state->y) : std::make_pair(0.0f, 0.0f);
  };
  if (const auto* exact = hand.component(c)) return value(exact);
  // "/input/thumbstick/x": the x of the vector2 "/input/thumbstick".
  for (const char* axis : {"/x", "/y"}) {
    if (c.size() > 2 && c.compare(c.size() - 2, 2, axis) == 0) {
      if (const auto* parent = hand.component(c.substr(0, c.size() - 2))) {
        auto xy = value(parent);
        return std::make_pair(axis[1] == 'x' ? xy.first : xy.second, 0.0f);
      }
      return std::make_pair(0.0f, 0.0f);
    }
  }
  // An identifier without its component ("/input/trigger"): OpenXR lets the runtime pick the
  // value for floats and the click for booleans (or the value, thresholded).
  const std::vector<std::string> candidates = type == XR_ACTION_TYPE_BOOLEAN_INPUT
                                                  ? std::vector<std::string>{c + "/click", c + "/value"}
                                                  : std::vector<std::string>{c + "/value", c + "/click"};
  for (const auto& candidate : candidates) {
    if (const auto* state = hand.component(candidate)) return value(state);
  }
  return std::make_pair(0.0f, 0.0f);  // a component at rest
}

void InputMapper::sync(const std::vector<const Action*>& actions,
                       const std::vector<std::vector<std::string>>& subactions, const SuggestedBindings& suggested,
                       int64_t nowNs) {
  for (size_t i = 0; i < actions.size(); ++i) {
    const Action& action = *actions[i];
    if (action.type == XR_ACTION_TYPE_VIBRATION_OUTPUT) continue;
    std::vector<std::string> keys{""};
    keys.insert(keys.end(), subactions[i].begin(), subactions[i].end());
    for (const std::string& key : keys) {
      const auto bound = sources(action, key, suggested);
      ActionValue next;
      next.active = !bound.empty();
      int64_t changedNs = 0;
      for (const BoundSource& source : bound) {
        if (action.type == XR_ACTION_TYPE_POSE_INPUT) continue;  // poses: located, not synced
        auto v = read(source, action.type, changedNs);
        if (!v) continue;
        if (action.type == XR_ACTION_TYPE_BOOLEAN_INPUT) {
          if (v->first >= kPressThreshold) next.x = 1;
        } else if (action.type == XR_ACTION_TYPE_FLOAT_INPUT) {
          if (std::fabs(v->first) > std::fabs(next.x)) next.x = v->first;
        } else if (action.type == XR_ACTION_TYPE_VECTOR2F_INPUT) {
          if (std::hypot(v->first, v->second) > std::hypot(next.x, next.y)) {
            next.x = v->first;
            next.y = v->second;
          }
        }
      }
      ActionValue& state = states_[{&action, key}];
      const bool changed = next.active && state.active && (next.x != state.x || next.y != state.y);
      next.changedSinceLastSync = changed;
      if (changed) {
        next.lastChangeNs = changedNs > 0 ? changedNs : nowNs;
      } else if (next.active && !state.active) {
        next.lastChangeNs = changedNs > 0 ? changedNs : nowNs;  // became active: its value is new
      } else {
        next.lastChangeNs = state.lastChangeNs;
      }
      if (!next.active) next = ActionValue{};
      state = next;
    }
  }
}

void InputMapper::deactivate(const Action& action) {
  for (auto it = states_.begin(); it != states_.end();) {
    it = it->first.first == &action ? states_.erase(it) : std::next(it);
  }
}

ActionValue InputMapper::state(const Action& action, const std::string& subaction) const {
  auto it = states_.find({&action, subaction});
  return it == states_.end() ? ActionValue{} : it->second;
}

std::optional<Pose> InputMapper::pose(const Action& action, const std::string& subaction,
                                      const SuggestedBindings& suggested) const {
  for (const BoundSource& source : sources(action, subaction, suggested)) {
    const HandInput& hand = input_.hands[source.hand];
    if (startsWith(source.component, "/input/aim")) {
      if (hand.aim) return hand.aim;
    } else if (startsWith(source.component, "/input/grip") || startsWith(source.component, "/input/palm")) {
      if (hand.grip) return hand.grip;
    }
  }
  return std::nullopt;
}

std::string localizedUserPath(const std::string& userPath) {
  if (userPath == kHandUserPaths[0]) return "Left Hand";
  if (userPath == kHandUserPaths[1]) return "Right Hand";
  return capitalizedWords(userPath.substr(userPath.rfind('/') + 1));
}

std::string localizedProfile(const std::string& profilePath) {
  return capitalizedWords(profilePath.substr(profilePath.rfind('/') + 1));
}

std::string localizedComponent(const std::string& component) {
  std::string_view c(component);
  for (std::string_view prefix : {"/input/", "/output/"}) {
    if (c.starts_with(prefix)) c.remove_prefix(prefix.size());
  }
  return capitalizedWords(c);
}

}  // namespace xrc::openxr
