#include "active_runtime.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

namespace xrc::tools {

namespace fs = std::filesystem;

namespace {
constexpr const char* kRuntimeName = "xr-compositor";

// The runtime a manifest names ("" if it is not a readable runtime manifest) and its library.
struct ManifestFacts {
  std::string name;
  std::string library;
};

Result<ManifestFacts> readManifest(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return makeError(ErrorCode::notFound, "cannot read '{}'", path.string());
  auto json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object() || !json.contains("runtime") || !json["runtime"].is_object() ||
      !json["runtime"].contains("library_path") || !json["runtime"]["library_path"].is_string()) {
    return makeError(ErrorCode::invalidArgument, "'{}' is not an OpenXR runtime manifest", path.string());
  }
  ManifestFacts facts;
  facts.library = json["runtime"]["library_path"].get<std::string>();
  if (json["runtime"].contains("name") && json["runtime"]["name"].is_string()) {
    facts.name = json["runtime"]["name"].get<std::string>();
  }
  return facts;
}

bool sameFile(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec) && !ec;
}

// Ours: a link (or copy) resolving to our manifest, or a manifest naming our runtime.
bool isOurs(const fs::path& activeFile, const fs::path& manifest) {
  if (sameFile(activeFile, manifest)) return true;
  auto facts = readManifest(activeFile);
  return facts && facts.value().name == kRuntimeName;
}

std::string describeOther(const fs::path& activeFile) {
  auto facts = readManifest(activeFile);
  if (!facts) return "something that is not an OpenXR runtime manifest";
  return fmt::format("another runtime ('{}', library {})", facts.value().name.empty() ? "unnamed" : facts.value().name,
                     facts.value().library);
}
}  // namespace

fs::path userActiveRuntimePath() {
  const char* config = std::getenv("XDG_CONFIG_HOME");
  fs::path base;
  if (config != nullptr && *config == '/') {
    base = config;
  } else {
    const char* home = std::getenv("HOME");
    base = fs::path(home != nullptr ? home : "/") / ".config";
  }
  return base / "openxr" / "1" / "active_runtime.json";
}

fs::path systemActiveRuntimePath() { return "/etc/xdg/openxr/1/active_runtime.json"; }

Result<fs::path> defaultRuntimeManifest() {
  const fs::path installed = XRC_INSTALLED_RUNTIME_MANIFEST;
  if (fs::exists(installed)) return installed;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path built = self.parent_path().parent_path() / "client-lib" / "openxr_xr-compositor.json";
    if (fs::exists(built)) return built;
  }
  return makeError(ErrorCode::notFound, "no xr-compositor runtime manifest at '{}' (not installed?); pass --manifest",
                   installed.string());
}

Result<std::string> setActiveRuntime(const fs::path& activeFile, const fs::path& manifestIn, bool force) {
  std::error_code ec;
  const fs::path manifest = fs::absolute(manifestIn, ec);
  if (ec) return makeError(ErrorCode::invalidArgument, "bad manifest path '{}'", manifestIn.string());
  auto facts = readManifest(manifest);
  if (!facts) return facts.error();
  if (fs::exists(fs::symlink_status(activeFile))) {
    if (sameFile(activeFile, manifest))
      return fmt::format("'{}' already points at '{}'", activeFile.string(), manifest.string());
    if (!isOurs(activeFile, manifest) && !force) {
      return makeError(ErrorCode::permissionDenied, "'{}' belongs to {}; use --force to replace it",
                       activeFile.string(), describeOther(activeFile));
    }
  }
  fs::create_directories(activeFile.parent_path(), ec);
  if (ec)
    return makeError(ErrorCode::internal, "cannot create '{}': {}", activeFile.parent_path().string(), ec.message());
  // A new link beside the old file, renamed over it: the loader never sees a missing file.
  const fs::path temporary = activeFile.string() + ".xrc-" + std::to_string(::getpid());
  fs::remove(temporary, ec);
  fs::create_symlink(manifest, temporary, ec);
  if (ec) return makeError(ErrorCode::internal, "cannot create '{}': {}", temporary.string(), ec.message());
  fs::rename(temporary, activeFile, ec);
  if (ec) {
    fs::remove(temporary);
    return makeError(ErrorCode::internal, "cannot replace '{}': {}", activeFile.string(), ec.message());
  }
  return fmt::format("'{}' now points at '{}'", activeFile.string(), manifest.string());
}

Result<std::string> unsetActiveRuntime(const fs::path& activeFile, const fs::path& manifest, bool force) {
  if (!fs::exists(fs::symlink_status(activeFile))) {
    return fmt::format("'{}' does not exist; nothing to do", activeFile.string());
  }
  if (!isOurs(activeFile, manifest) && !force) {
    return makeError(ErrorCode::permissionDenied, "'{}' belongs to {}; use --force to remove it", activeFile.string(),
                     describeOther(activeFile));
  }
  std::error_code ec;
  fs::remove(activeFile, ec);
  if (ec) return makeError(ErrorCode::internal, "cannot remove '{}': {}", activeFile.string(), ec.message());
  return fmt::format("removed '{}'", activeFile.string());
}

}  // namespace xrc::tools
