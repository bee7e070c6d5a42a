// The daemon as an OpenXR application: the instance and HMD system of the active runtime (the
// loader honours XR_RUNTIME_JSON), Vulkan through XR_KHR_vulkan_enable2 (the runtime creates the
// daemon's VkInstance and VkDevice, adding what it needs), and the runtime's clock through
// XR_KHR_convert_timespec_time.
#pragma once

#include <memory>
#include <string>

#include "../../gpu/gpu_device.hpp"
#include "xr_util.hpp"

namespace xrc {

class OpenXrInstance final : public gpu::VulkanFactory {
 public:
  // `overlay`: enable XR_EXTX_overlay (the runtime must offer it).
  static Result<std::unique_ptr<OpenXrInstance>> create(bool overlay = false);
  OpenXrInstance() = default;  // use create()

  XrInstance handle() const { return instance_.get(); }
  XrSystemId system() const { return system_; }
  const std::string& runtimeName() const { return runtimeName_; }
  const std::string& systemName() const { return systemName_; }
  uint32_t maxLayerCount() const { return maxLayerCount_; }
  // What the runtime takes beyond projection and quad layers (each enabled where it offers it).
  struct LayerExtensions {
    bool depth = false;           // XR_KHR_composition_layer_depth
    bool cylinder = false;        // XR_KHR_composition_layer_cylinder
    bool equirect = false;        // XR_KHR_composition_layer_equirect
    bool equirect2 = false;       // XR_KHR_composition_layer_equirect2
    bool cube = false;            // XR_KHR_composition_layer_cube
    bool colorScaleBias = false;  // XR_KHR_composition_layer_color_scale_bias
  };
  const LayerExtensions& layerExtensions() const { return layerExtensions_; }
  bool visibilityMask() const { return visibilityMask_; }  // XR_KHR_visibility_mask is enabled
  bool overlay() const { return overlay_; }                // XR_EXTX_overlay is enabled
  Status check(XrResult result, const char* what) const { return oxr::check(instance_.get(), result, what); }

  // gpu::VulkanFactory, through xrCreateVulkanInstanceKHR / xrGetVulkanGraphicsDevice2KHR /
  // xrCreateVulkanDeviceKHR.
  Result<VkInstance> createInstance(const VkInstanceCreateInfo& info) override;
  Result<VkPhysicalDevice> physicalDevice(VkInstance instance) override;
  Result<VkDevice> createDevice(VkPhysicalDevice physical, const VkDeviceCreateInfo& info) override;

  // A second instance (after the first was lost) must be given the Vulkan objects the daemon
  // already has: the runtime must name the same physical device.
  Status adoptVulkan(VkInstance instance, VkPhysicalDevice physical);

  // The runtime's visibility mask of `view` of the primary stereo configuration
  // (XR_KHR_visibility_mask, which must be enabled), bounded by kMaxVisibilityMaskVertices.
  Result<VisibilityMask> visibilityMaskOf(XrSession session, uint32_t view, XrVisibilityMaskTypeKHR type) const;

  // XrTime <-> CLOCK_MONOTONIC nanoseconds (the daemon's and its clients' clock).
  Result<int64_t> toMonotonicNs(XrTime time) const;
  Result<XrTime> toXrTime(int64_t monotonicNs) const;

 private:
  Status init(bool overlay);
  template <typename Pfn>
  Status load(const char* name, Pfn& out);

  oxr::InstanceOwner instance_;
  XrSystemId system_ = XR_NULL_SYSTEM_ID;
  std::string runtimeName_, systemName_;
  uint32_t maxLayerCount_ = 0;
  LayerExtensions layerExtensions_;
  bool visibilityMask_ = false;
  bool overlay_ = false;

  PFN_xrGetVulkanGraphicsRequirements2KHR getRequirements_ = nullptr;
  PFN_xrCreateVulkanInstanceKHR createVkInstance_ = nullptr;
  PFN_xrGetVulkanGraphicsDevice2KHR getVkDevice_ = nullptr;
  PFN_xrCreateVulkanDeviceKHR createVkDevice_ = nullptr;
  PFN_xrConvertTimespecTimeToTimeKHR toXrTime_ = nullptr;
  PFN_xrConvertTimeToTimespecTimeKHR toTimespec_ = nullptr;
  PFN_xrGetVisibilityMaskKHR getVisibilityMask_ = nullptr;
};

}  // namespace xrc
