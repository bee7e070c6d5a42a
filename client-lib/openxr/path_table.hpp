// XrPath atoms of one instance: path strings are validated against OpenXR's well-formed path
// rules and interned, so that an XrPath is a small stable number and XR_NULL_PATH is never used.
#pragma once

#include <openxr/openxr.h>

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "xrc/thread_annotations.hpp"

namespace xrc::openxr {

// A well-formed path (OpenXR 1.0, 6.1): starts with '/', components separated by single '/',
// each made of [a-z0-9-_.] and not only of '.', no trailing '/', shorter than XR_MAX_PATH_LENGTH.
bool isWellFormedPath(std::string_view path);
// A well-formed name of an action or action set (one path component, no '/').
bool isWellFormedName(std::string_view name);

class PathTable {
 public:
  // XR_ERROR_PATH_FORMAT_INVALID for a malformed string, XR_ERROR_PATH_COUNT_EXCEEDED when full.
  XrResult toPath(std::string_view text, XrPath& out);
  // XR_ERROR_PATH_INVALID for XR_NULL_PATH or a value this table never returned.
  XrResult toString(XrPath path, std::string& out) const;
  // The string of a valid path, or empty for an invalid one.
  std::string stringOf(XrPath path) const;
  // The path of a string only if it was interned before (no new atom).
  XrPath find(std::string_view text) const;

  static constexpr size_t kMaxPaths = 1u << 16;

 private:
  mutable Mutex mutex_;
  std::vector<std::string> strings_ XRC_GUARDED_BY(mutex_);  // index = path - 1
  std::unordered_map<std::string, XrPath> atoms_ XRC_GUARDED_BY(mutex_);
};

}  // namespace xrc::openxr
