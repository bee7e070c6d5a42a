// `xr-compositorctl set-active-runtime` / `unset-active-runtime`: point the OpenXR loader's
// active_runtime.json (the user's or the system's) at our runtime manifest, never clobbering
// another runtime's file unless forced.
#pragma once

#include <filesystem>
#include <string>

#include "xrc/result.hpp"

namespace xrc::tools {

// $XDG_CONFIG_HOME (else ~/.config) /openxr/1/active_runtime.json: what the loader reads first.
std::filesystem::path userActiveRuntimePath();
// /etc/xdg/openxr/1/active_runtime.json: the loader's system-wide choice.
std::filesystem::path systemActiveRuntimePath();

// Our manifest: the installed one, else the one in the build tree next to this program.
Result<std::filesystem::path> defaultRuntimeManifest();

// Makes `activeFile` a symlink to `manifest`. Refuses (unless `force`) when it exists and belongs
// to another runtime. Returns what it did, for the user.
Result<std::string> setActiveRuntime(const std::filesystem::path& activeFile, const std::filesystem::path& manifest,
                                     bool force);
// Removes `activeFile` if it is ours (or `force`).
Result<std::string> unsetActiveRuntime(const std::filesystem::path& activeFile, const std::filesystem::path& manifest,
                                       bool force);

}  // namespace xrc::tools
