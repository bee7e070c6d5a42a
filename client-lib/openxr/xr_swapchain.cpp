// Swapchains: images are the daemon's shared images, imported by client-lib; acquire/wait/release
// follow OpenXR's order rules, and release does not wait for the daemon.
#include <algorithm>

#include "entry_points.hpp"

namespace xrc::openxr {

namespace {

// Ceiling for XR_INFINITE_DURATION waits: blocking waits are bounded; the app may wait again.
constexpr int64_t kMaxImageWaitNs = 10'000'000'000;

constexpr XrSwapchainUsageFlags kKnownUsage =
    XR_SWAPCHAIN_USAGE_COLOR_ATTACHMENT_BIT | XR_SWAPCHAIN_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT |
    XR_SWAPCHAIN_USAGE_UNORDERED_ACCESS_BIT | XR_SWAPCHAIN_USAGE_TRANSFER_SRC_BIT |
    XR_SWAPCHAIN_USAGE_TRANSFER_DST_BIT | XR_SWAPCHAIN_USAGE_SAMPLED_BIT | XR_SWAPCHAIN_USAGE_MUTABLE_FORMAT_BIT;

XrResult imageCallFailed(SwapchainObject& sc, const char* function, const Error& error) {
  Lock lock(sc.session->mutex);
  return daemonCallFailed(*sc.session, function, error, /*appCallOrder=*/true);
}

XrResult checkSession(Session& session) {
  Lock lock(session.mutex);
  const XrResult r = checkConnection(session);
  return r == XR_ERROR_SESSION_LOST ? XR_SUCCESS : r;
}

}  // namespace

XrResult XRAPI_CALL EnumerateSwapchainFormats(XrSession handle, uint32_t capacity, uint32_t* count, int64_t* formats) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  std::vector<int64_t> list;
  for (VkFormat f : session->instance->system.swapchainFormats) list.push_back(int64_t(f));
  return enumerate(list, capacity, count, formats);
}

XrResult XRAPI_CALL CreateSwapchain(XrSession handle, const XrSwapchainCreateInfo* info, XrSwapchain* out) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_SWAPCHAIN_CREATE_INFO) || out == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  if ((info->usageFlags & ~kKnownUsage) != 0) return XR_ERROR_VALIDATION_FAILURE;
  if ((info->createFlags & ~XrSwapchainCreateFlags(XR_SWAPCHAIN_CREATE_PROTECTED_CONTENT_BIT |
                                                   XR_SWAPCHAIN_CREATE_STATIC_IMAGE_BIT)) != 0) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  if (info->createFlags & XR_SWAPCHAIN_CREATE_PROTECTED_CONTENT_BIT) return XR_ERROR_FEATURE_UNSUPPORTED;
  const auto& formats = session->instance->system.swapchainFormats;
  if (std::find(formats.begin(), formats.end(), VkFormat(info->format)) == formats.end()) {
    return XR_ERROR_SWAPCHAIN_FORMAT_UNSUPPORTED;
  }
  if (info->width == 0 || info->height == 0 || info->arraySize == 0 || info->mipCount == 0 || info->sampleCount == 0 ||
      (info->faceCount != 1 && info->faceCount != 6)) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  SwapchainRequest request;
  // Static: the daemon makes one image (protocol 1.6; an older daemon answers `unsupported`,
  // XR_ERROR_FEATURE_UNSUPPORTED); the face allows it one acquire.
  request.createFlags = info->createFlags & XR_SWAPCHAIN_CREATE_STATIC_IMAGE_BIT;
  request.usageFlags = info->usageFlags;
  request.format = info->format;
  request.sampleCount = info->sampleCount;
  request.width = info->width;
  request.height = info->height;
  request.faceCount = info->faceCount;
  request.arraySize = info->arraySize;
  request.mipCount = info->mipCount;
  auto swapchain = std::make_shared<SwapchainObject>();
  swapchain->session = session;
  swapchain->width = info->width;
  swapchain->height = info->height;
  swapchain->arraySize = info->arraySize;
  swapchain->faceCount = info->faceCount;
  swapchain->isStatic = (info->createFlags & XR_SWAPCHAIN_CREATE_STATIC_IMAGE_BIT) != 0;
  {
    Lock lock(session->mutex);
    if (XrResult r = checkConnection(*session); XR_FAILED(r)) return r;
  }
  auto created = session->connection->createSwapchain(request);  // blocking: not under the lock
  if (!created) {
    Lock lock(session->mutex);
    return daemonCallFailed(*session, "xrCreateSwapchain", created.error());
  }
  swapchain->impl = std::move(created).value();
  const uint64_t raw = Handles::get().add(swapchain);
  Lock lock(session->mutex);
  session->childHandles.push_back(raw);
  *out = fromRaw<XrSwapchain>(raw);
  return XR_SUCCESS;
}

XrResult XRAPI_CALL DestroySwapchain(XrSwapchain handle) {
  auto swapchain = lookup<SwapchainObject>(handle);
  if (!swapchain) return XR_ERROR_HANDLE_INVALID;
  destroyChild(*swapchain->session, toRaw(handle));
  return XR_SUCCESS;
}

XrResult XRAPI_CALL EnumerateSwapchainImages(XrSwapchain handle, uint32_t capacity, uint32_t* count,
                                             XrSwapchainImageBaseHeader* images) {
  auto swapchain = lookup<SwapchainObject>(handle);
  if (!swapchain) return XR_ERROR_HANDLE_INVALID;
  if (count == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  const std::vector<VkImage>& vkImages = swapchain->impl->images();
  *count = uint32_t(vkImages.size());
  if (capacity == 0) return XR_SUCCESS;
  if (images == nullptr) return XR_ERROR_VALIDATION_FAILURE;
  if (capacity < vkImages.size()) return XR_ERROR_SIZE_INSUFFICIENT;
  auto out = reinterpret_cast<XrSwapchainImageVulkanKHR*>(images);
  for (size_t i = 0; i < vkImages.size(); ++i) {
    if (out[i].type != XR_TYPE_SWAPCHAIN_IMAGE_VULKAN_KHR) return XR_ERROR_VALIDATION_FAILURE;
  }
  for (size_t i = 0; i < vkImages.size(); ++i) out[i].image = vkImages[i];
  return XR_SUCCESS;
}

XrResult XRAPI_CALL AcquireSwapchainImage(XrSwapchain handle, const XrSwapchainImageAcquireInfo* info,
                                          uint32_t* index) {
  auto swapchain = lookup<SwapchainObject>(handle);
  if (!swapchain) return XR_ERROR_HANDLE_INVALID;
  if ((info != nullptr && info->type != XR_TYPE_SWAPCHAIN_IMAGE_ACQUIRE_INFO) || index == nullptr) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  Session& session = *swapchain->session;
  CallTimer timer(session.stats.get(), Call::acquire);
  // After a loss the images keep cycling locally (client-lib's local mode) so the app winds down.
  if (XrResult r = checkSession(session); XR_FAILED(r)) return r;
  Lock order(swapchain->orderMutex);
  const uint32_t imageCount = uint32_t(swapchain->impl->images().size());
  const uint32_t outstanding = swapchain->acquiredNotWaited + (swapchain->waitedNotReleased ? 1 : 0);
  if ((swapchain->isStatic && swapchain->everAcquired) || outstanding >= imageCount) {
    return XR_ERROR_CALL_ORDER_INVALID;
  }
  auto acquired = swapchain->impl->acquire();
  if (!acquired) return imageCallFailed(*swapchain, "xrAcquireSwapchainImage", acquired.error());
  swapchain->acquiredNotWaited++;
  swapchain->everAcquired = true;
  *index = acquired.value();
  return XR_SUCCESS;
}

XrResult XRAPI_CALL WaitSwapchainImage(XrSwapchain handle, const XrSwapchainImageWaitInfo* info) {
  auto swapchain = lookup<SwapchainObject>(handle);
  if (!swapchain) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(info, XR_TYPE_SWAPCHAIN_IMAGE_WAIT_INFO)) return XR_ERROR_VALIDATION_FAILURE;
  const int64_t timeout = std::clamp<int64_t>(info->timeout, 0, kMaxImageWaitNs);
  Session& session = *swapchain->session;
  CallTimer timer(session.stats.get(), Call::wait);
  // After a loss the images keep cycling locally (client-lib's local mode) so the app winds down.
  if (XrResult r = checkSession(session); XR_FAILED(r)) return r;
  Lock order(swapchain->orderMutex);
  if (swapchain->waitedNotReleased || swapchain->acquiredNotWaited == 0) return XR_ERROR_CALL_ORDER_INVALID;
  auto waited = swapchain->impl->wait(std::chrono::nanoseconds(timeout));
  if (!waited) {
    if (waited.error().code == ErrorCode::timeout) return XR_TIMEOUT_EXPIRED;  // the app may wait again
    return imageCallFailed(*swapchain, "xrWaitSwapchainImage", waited.error());
  }
  swapchain->acquiredNotWaited--;
  swapchain->waitedNotReleased = true;
  return XR_SUCCESS;
}

XrResult XRAPI_CALL ReleaseSwapchainImage(XrSwapchain handle, const XrSwapchainImageReleaseInfo* info) {
  auto swapchain = lookup<SwapchainObject>(handle);
  if (!swapchain) return XR_ERROR_HANDLE_INVALID;
  if (info != nullptr && info->type != XR_TYPE_SWAPCHAIN_IMAGE_RELEASE_INFO) return XR_ERROR_VALIDATION_FAILURE;
  Session& session = *swapchain->session;
  CallTimer timer(session.stats.get(), Call::release);
  // After a loss the images keep cycling locally (client-lib's local mode) so the app winds down.
  if (XrResult r = checkSession(session); XR_FAILED(r)) return r;
  Lock order(swapchain->orderMutex);
  if (!swapchain->waitedNotReleased) return XR_ERROR_CALL_ORDER_INVALID;
  auto released = swapchain->impl->release();
  if (!released) return imageCallFailed(*swapchain, "xrReleaseSwapchainImage", released.error());
  swapchain->waitedNotReleased = false;
  swapchain->everReleased = true;
  return XR_SUCCESS;
}

}  // namespace xrc::openxr
