// OpenXR plumbing for the openxr backend: the platform defines the headers need, XrResult to
// typed errors, and owners that destroy OpenXR handles exactly once.
#pragma once

#include <time.h>
#include <vulkan/vulkan.h>

// openxr_platform.h declares the Vulkan and timespec entry points only with these, and needs
// vulkan.h and time.h included before it.
#ifndef XR_USE_GRAPHICS_API_VULKAN
#define XR_USE_GRAPHICS_API_VULKAN 1
#endif
#ifndef XR_USE_TIMESPEC
#define XR_USE_TIMESPEC 1
#endif
#include <openxr/openxr.h>
#include <openxr/openxr_platform.h>

#include <utility>

#include "xrc/result.hpp"

namespace xrc::oxr {

// An OpenXR input/output struct: zeroed, with its type set.
template <typename T>
T make(XrStructureType type) {
  T value{};
  value.type = type;
  return value;
}

// "xrCall: XR_ERROR_..." as a typed error: unsupported for missing features, timeout for
// XR_TIMEOUT_EXPIRED, internal otherwise. XR_SUCCESS and other success codes pass.
Status check(XrInstance instance, XrResult result, const char* what);
std::string resultName(XrInstance instance, XrResult result);

// Owns one OpenXR handle; destroys it with `Destroy` (the children of an instance or session
// must go before it, which member order takes care of).
template <typename Handle, XrResult(XRAPI_PTR* Destroy)(Handle)>
class Owner {
 public:
  Owner() = default;
  explicit Owner(Handle handle) : handle_(handle) {}
  Owner(Owner&& other) noexcept : handle_(std::exchange(other.handle_, XR_NULL_HANDLE)) {}
  Owner& operator=(Owner&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, XR_NULL_HANDLE);
    }
    return *this;
  }
  Owner(const Owner&) = delete;
  Owner& operator=(const Owner&) = delete;
  ~Owner() { reset(); }

  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != XR_NULL_HANDLE; }
  void reset() {
    if (handle_ != XR_NULL_HANDLE) Destroy(handle_);
    handle_ = XR_NULL_HANDLE;
  }

 private:
  Handle handle_ = XR_NULL_HANDLE;
};

using InstanceOwner = Owner<XrInstance, xrDestroyInstance>;
using SessionOwner = Owner<XrSession, xrDestroySession>;
using SpaceOwner = Owner<XrSpace, xrDestroySpace>;
using SwapchainOwner = Owner<XrSwapchain, xrDestroySwapchain>;

}  // namespace xrc::oxr
