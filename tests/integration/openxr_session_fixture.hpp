// An OpenXR app's session through the real OpenXR loader and our runtime, against a fresh
// headless daemon: the fixture the OpenXR integration tests share.
#pragma once

#include <gtest/gtest.h>

// OpenXR's idiom `XrThing thing{XR_TYPE_THING};` value-initialises the rest on purpose.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define XR_USE_GRAPHICS_API_VULKAN 1
#include <vulkan/vulkan.h>
// openxr_platform.h needs the Vulkan types first.
#include <openxr/openxr.h>
#include <openxr/openxr_platform.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "harness.hpp"

namespace xrc::test {

template <typename F>
F proc(XrInstance instance, const char* name) {
  PFN_xrVoidFunction f = nullptr;
  EXPECT_EQ(xrGetInstanceProcAddr(instance, name, &f), XR_SUCCESS) << name;
  return reinterpret_cast<F>(f);
}

inline XrResult createInstance(std::vector<const char*> extensions, XrInstance* out,
                               XrVersion apiVersion = XR_MAKE_VERSION(1, 0, 0), std::vector<const char*> layers = {}) {
  XrInstanceCreateInfo info{};
  info.type = XR_TYPE_INSTANCE_CREATE_INFO;
  std::strcpy(info.applicationInfo.applicationName, "xrc-bad-input");
  info.applicationInfo.apiVersion = apiVersion;
  info.enabledExtensionCount = uint32_t(extensions.size());
  info.enabledExtensionNames = extensions.data();
  info.enabledApiLayerCount = uint32_t(layers.size());
  info.enabledApiLayerNames = layers.data();
  return xrCreateInstance(&info, out);
}

// An OpenXR session on lavapipe through XR_KHR_vulkan_enable2, with one color swapchain.
class OpenXrSession : public ::testing::Test {
 protected:
  // Enabled besides Vulkan 2, depth and overlay.
  virtual std::vector<const char*> moreExtensions() const { return {}; }

  // The daemon the app's session is on: daemon_, unless a fixture stacks another one over it.
  virtual Daemon& target() { return daemon_; }

  void SetUp() override {
    ASSERT_TRUE(daemon_.ready()) << daemon_.process().output();
    ASSERT_TRUE(target().ready()) << target().process().output();
    ::setenv("XR_RUNTIME_JSON", binary("XRC_OPENXR_MANIFEST").c_str(), 1);
    ::setenv("XR_COMPOSITOR_SOCKET", target().socket().c_str(), 1);
    std::vector<const char*> extensions{XR_KHR_VULKAN_ENABLE2_EXTENSION_NAME,
                                        XR_KHR_COMPOSITION_LAYER_DEPTH_EXTENSION_NAME, XR_EXTX_OVERLAY_EXTENSION_NAME};
    for (const char* e : moreExtensions()) extensions.push_back(e);
    ASSERT_EQ(createInstance(extensions, &instance_), XR_SUCCESS);
    XrSystemGetInfo systemInfo{XR_TYPE_SYSTEM_GET_INFO, nullptr, XR_FORM_FACTOR_HEAD_MOUNTED_DISPLAY};
    ASSERT_EQ(xrGetSystem(instance_, &systemInfo, &system_), XR_SUCCESS);
  }

  void createVulkan() {
    XrGraphicsRequirementsVulkan2KHR requirements{XR_TYPE_GRAPHICS_REQUIREMENTS_VULKAN2_KHR};
    ASSERT_EQ(proc<PFN_xrGetVulkanGraphicsRequirements2KHR>(instance_, "xrGetVulkanGraphicsRequirements2KHR")(
                  instance_, system_, &requirements),
              XR_SUCCESS);
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.apiVersion = VK_API_VERSION_1_0;  // as hello_xr: the runtime must cope with 1.0
    VkInstanceCreateInfo ici{};
    ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ici.pApplicationInfo = &app;
    XrVulkanInstanceCreateInfoKHR xrIci{XR_TYPE_VULKAN_INSTANCE_CREATE_INFO_KHR};
    xrIci.systemId = system_;
    xrIci.pfnGetInstanceProcAddr = vkGetInstanceProcAddr;
    xrIci.vulkanCreateInfo = &ici;
    VkResult vr = VK_ERROR_UNKNOWN;
    ASSERT_EQ(proc<PFN_xrCreateVulkanInstanceKHR>(instance_, "xrCreateVulkanInstanceKHR")(instance_, &xrIci,
                                                                                          &vkInstance_, &vr),
              XR_SUCCESS);
    ASSERT_EQ(vr, VK_SUCCESS);
    XrVulkanGraphicsDeviceGetInfoKHR getInfo{XR_TYPE_VULKAN_GRAPHICS_DEVICE_GET_INFO_KHR, nullptr, system_,
                                             vkInstance_};
    ASSERT_EQ(proc<PFN_xrGetVulkanGraphicsDevice2KHR>(instance_, "xrGetVulkanGraphicsDevice2KHR")(instance_, &getInfo,
                                                                                                  &physical_),
              XR_SUCCESS);
    const float priority = 1;
    VkDeviceQueueCreateInfo qi{};
    qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qi.queueFamilyIndex = 0;  // lavapipe: one graphics family
    qi.queueCount = 1;
    qi.pQueuePriorities = &priority;
    VkDeviceCreateInfo dci{};
    dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qi;
    XrVulkanDeviceCreateInfoKHR xrDci{XR_TYPE_VULKAN_DEVICE_CREATE_INFO_KHR};
    xrDci.systemId = system_;
    xrDci.pfnGetInstanceProcAddr = vkGetInstanceProcAddr;
    xrDci.vulkanPhysicalDevice = physical_;
    xrDci.vulkanCreateInfo = &dci;
    ASSERT_EQ(proc<PFN_xrCreateVulkanDeviceKHR>(instance_, "xrCreateVulkanDeviceKHR")(instance_, &xrDci, &device_, &vr),
              XR_SUCCESS);
    ASSERT_EQ(vr, VK_SUCCESS);
  }

  // `overlay`: chained after the graphics binding (XR_EXTX_overlay).
  XrSwapchain createColorSwapchain(XrSwapchainCreateFlags flags = 0) {
    XrSwapchainCreateInfo sc{XR_TYPE_SWAPCHAIN_CREATE_INFO};
    sc.createFlags = flags;
    sc.usageFlags = XR_SWAPCHAIN_USAGE_COLOR_ATTACHMENT_BIT;
    sc.format = VK_FORMAT_R8G8B8A8_UNORM;
    sc.sampleCount = 1;
    sc.width = 64;
    sc.height = 64;
    sc.faceCount = 1;
    sc.arraySize = 1;
    sc.mipCount = 1;
    XrSwapchain swapchain = XR_NULL_HANDLE;
    EXPECT_EQ(xrCreateSwapchain(session_, &sc, &swapchain), XR_SUCCESS);
    return swapchain;
  }

  void createSession(const XrSessionCreateInfoOverlayEXTX* overlay = nullptr) {
    ASSERT_NO_FATAL_FAILURE(createVulkan());
    XrGraphicsBindingVulkan2KHR binding{XR_TYPE_GRAPHICS_BINDING_VULKAN2_KHR};
    binding.instance = vkInstance_;
    binding.physicalDevice = physical_;
    binding.device = device_;
    binding.next = overlay;
    XrSessionCreateInfo info{XR_TYPE_SESSION_CREATE_INFO, &binding, 0, system_};
    ASSERT_EQ(xrCreateSession(instance_, &info, &session_), XR_SUCCESS);
    swapchain_ = createColorSwapchain();
    ASSERT_NE(swapchain_, XR_NULL_HANDLE);
    XrReferenceSpaceCreateInfo space{
        XR_TYPE_REFERENCE_SPACE_CREATE_INFO, nullptr, XR_REFERENCE_SPACE_TYPE_LOCAL, {{0, 0, 0, 1}, {0, 0, 0}}};
    ASSERT_EQ(xrCreateReferenceSpace(session_, &space, &local_), XR_SUCCESS);
  }

  void beginSession() {
    XrSessionBeginInfo begin{XR_TYPE_SESSION_BEGIN_INFO, nullptr, XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO};
    ASSERT_EQ(xrBeginSession(session_, &begin), XR_SUCCESS);
  }

  // A running session's first frame, begun, with one image of the swapchain released for it.
  void startFrameWithAnImage(XrFrameState& state) {
    ASSERT_NO_FATAL_FAILURE(createSession());
    ASSERT_NO_FATAL_FAILURE(beginSession());
    ASSERT_EQ(xrWaitFrame(session_, nullptr, &state), XR_SUCCESS);
    ASSERT_EQ(xrBeginFrame(session_, nullptr), XR_SUCCESS);
    ASSERT_NO_FATAL_FAILURE(cycleImage());
  }

  // acquire -> wait -> release of the swapchain's next image.
  void cycleImage() {
    uint32_t index = 0;
    ASSERT_EQ(xrAcquireSwapchainImage(swapchain_, nullptr, &index), XR_SUCCESS);
    XrSwapchainImageWaitInfo wait{XR_TYPE_SWAPCHAIN_IMAGE_WAIT_INFO, nullptr, XR_INFINITE_DURATION};
    ASSERT_EQ(xrWaitSwapchainImage(swapchain_, &wait), XR_SUCCESS);
    ASSERT_EQ(xrReleaseSwapchainImage(swapchain_, nullptr), XR_SUCCESS);
  }

  XrCompositionLayerProjectionView view(int32_t x = 0, int32_t width = 64) {
    XrCompositionLayerProjectionView v{XR_TYPE_COMPOSITION_LAYER_PROJECTION_VIEW};
    v.pose = {{0, 0, 0, 1}, {0, 0, 0}};
    v.fov = {-0.7f, 0.7f, 0.7f, -0.7f};
    v.subImage.swapchain = swapchain_;
    v.subImage.imageRect = {{x, 0}, {width, 64}};
    return v;
  }

  XrResult endFrame(XrTime time, std::vector<const XrCompositionLayerBaseHeader*> layers,
                    XrEnvironmentBlendMode blend = XR_ENVIRONMENT_BLEND_MODE_OPAQUE) {
    XrFrameEndInfo end{XR_TYPE_FRAME_END_INFO, nullptr, time, blend, uint32_t(layers.size()), layers.data()};
    return xrEndFrame(session_, &end);
  }

  // Every session state change queued so far, in order.
  std::vector<XrSessionState> pollSessionStates() {
    std::vector<XrSessionState> states;
    XrEventDataBuffer event{XR_TYPE_EVENT_DATA_BUFFER};
    while (xrPollEvent(instance_, &event) == XR_SUCCESS) {
      if (event.type == XR_TYPE_EVENT_DATA_SESSION_STATE_CHANGED) {
        states.push_back(reinterpret_cast<XrEventDataSessionStateChanged&>(event).state);
      }
      event = {XR_TYPE_EVENT_DATA_BUFFER};
    }
    return states;
  }

  void TearDown() override {
    if (session_ != XR_NULL_HANDLE) xrDestroySession(session_);
    if (device_ != VK_NULL_HANDLE) vkDestroyDevice(device_, nullptr);
    if (vkInstance_ != VK_NULL_HANDLE) vkDestroyInstance(vkInstance_, nullptr);
    if (instance_ != XR_NULL_HANDLE) xrDestroyInstance(instance_);
  }

  TempDir dir_;
  Daemon daemon_{dir_};
  XrInstance instance_ = XR_NULL_HANDLE;
  XrSystemId system_ = XR_NULL_SYSTEM_ID;
  VkInstance vkInstance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  XrSession session_ = XR_NULL_HANDLE;
  XrSwapchain swapchain_ = XR_NULL_HANDLE;
  XrSpace local_ = XR_NULL_HANDLE;
};

}  // namespace xrc::test
