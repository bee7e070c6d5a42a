#include "path_table.hpp"

namespace xrc::openxr {

namespace {
bool isNameChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'; }

bool isWellFormedComponent(std::string_view component) {
  if (component.empty()) return false;
  bool onlyDots = true;
  for (char c : component) {
    if (!isNameChar(c)) return false;
    onlyDots = onlyDots && c == '.';
  }
  return !onlyDots;
}
}  // namespace

bool isWellFormedPath(std::string_view path) {
  if (path.size() < 2 || path.size() >= XR_MAX_PATH_LENGTH || path.front() != '/') return false;
  size_t start = 1;
  while (start <= path.size()) {
    const size_t end = std::min(path.find('/', start), path.size());
    if (!isWellFormedComponent(path.substr(start, end - start))) return false;
    start = end + 1;
  }
  return true;
}

bool isWellFormedName(std::string_view name) { return isWellFormedComponent(name); }

XrResult PathTable::toPath(std::string_view text, XrPath& out) {
  if (!isWellFormedPath(text)) return XR_ERROR_PATH_FORMAT_INVALID;
  Lock lock(mutex_);
  auto it = atoms_.find(std::string(text));
  if (it != atoms_.end()) {
    out = it->second;
    return XR_SUCCESS;
  }
  if (strings_.size() >= kMaxPaths) return XR_ERROR_PATH_COUNT_EXCEEDED;
  strings_.emplace_back(text);
  out = XrPath(strings_.size());
  atoms_.emplace(strings_.back(), out);
  return XR_SUCCESS;
}

XrResult PathTable::toString(XrPath path, std::string& out) const {
  Lock lock(mutex_);
  if (path == XR_NULL_PATH || path > strings_.size()) return XR_ERROR_PATH_INVALID;
  out = strings_[size_t(path - 1)];
  return XR_SUCCESS;
}

std::string PathTable::stringOf(XrPath path) const {
  std::string out;
  (void)toString(path, out);
  return out;
}

XrPath PathTable::find(std::string_view text) const {
  Lock lock(mutex_);
  auto it = atoms_.find(std::string(text));
  return it == atoms_.end() ? XR_NULL_PATH : it->second;
}

}  // namespace xrc::openxr
