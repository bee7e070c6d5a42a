#include "xrc/vk_util.hpp"

#include <algorithm>
#include <cstring>

namespace xrc::vk {

const char* resultName(VkResult result) {
  switch (result) {
#define XRC_CASE(x) \
  case x:           \
    return #x;
    XRC_CASE(VK_SUCCESS)
    XRC_CASE(VK_NOT_READY)
    XRC_CASE(VK_TIMEOUT)
    XRC_CASE(VK_EVENT_SET)
    XRC_CASE(VK_EVENT_RESET)
    XRC_CASE(VK_INCOMPLETE)
    XRC_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    XRC_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    XRC_CASE(VK_ERROR_INITIALIZATION_FAILED)
    XRC_CASE(VK_ERROR_DEVICE_LOST)
    XRC_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    XRC_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    XRC_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    XRC_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    XRC_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    XRC_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    XRC_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    XRC_CASE(VK_ERROR_FRAGMENTED_POOL)
    XRC_CASE(VK_ERROR_UNKNOWN)
    XRC_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    XRC_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
#undef XRC_CASE
    default:
      return "VkResult(other)";
  }
}

bool isDepthFormat(VkFormat format) {
  switch (format) {
    case VK_FORMAT_D16_UNORM:
    case VK_FORMAT_D32_SFLOAT:
    case VK_FORMAT_D24_UNORM_S8_UINT:
    case VK_FORMAT_D32_SFLOAT_S8_UINT:
    case VK_FORMAT_X8_D24_UNORM_PACK32:
      return true;
    default:
      return false;
  }
}

VkImageAspectFlags aspectMask(VkFormat format) {
  switch (format) {
    case VK_FORMAT_D16_UNORM:
    case VK_FORMAT_D32_SFLOAT:
    case VK_FORMAT_X8_D24_UNORM_PACK32:
      return VK_IMAGE_ASPECT_DEPTH_BIT;
    case VK_FORMAT_D24_UNORM_S8_UINT:
    case VK_FORMAT_D32_SFLOAT_S8_UINT:
      return VK_IMAGE_ASPECT_DEPTH_BIT | VK_IMAGE_ASPECT_STENCIL_BIT;
    default:
      return VK_IMAGE_ASPECT_COLOR_BIT;
  }
}

uint32_t texelSize(VkFormat format) {
  switch (format) {
    case VK_FORMAT_R8G8B8A8_UNORM:
    case VK_FORMAT_R8G8B8A8_SRGB:
    case VK_FORMAT_B8G8R8A8_UNORM:
    case VK_FORMAT_B8G8R8A8_SRGB:
    case VK_FORMAT_D32_SFLOAT:
    case VK_FORMAT_A2B10G10R10_UNORM_PACK32:
      return 4;
    case VK_FORMAT_D16_UNORM:
      return 2;
    case VK_FORMAT_R16G16B16A16_SFLOAT:
      return 8;
    default:
      return 0;
  }
}

uint64_t imageBytes(const VkImageCreateInfo& info) {
  const uint64_t texel = texelSize(info.format) != 0 ? texelSize(info.format) : 16;
  uint64_t texels = 0;
  for (uint32_t mip = 0; mip < std::max(info.mipLevels, 1u); ++mip) {
    texels += uint64_t(std::max(info.extent.width >> mip, 1u)) * std::max(info.extent.height >> mip, 1u) *
              std::max(info.extent.depth >> mip, 1u);
  }
  const uint64_t samples = std::max<uint64_t>(uint64_t(info.samples), 1);
  return texels * texel * std::max(info.arrayLayers, 1u) * samples;
}

VkImageLayout attachmentLayout(VkFormat format) {
  return isDepthFormat(format) ? VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL
                               : VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
}

VkImageCreateInfo sharedImageCreateInfo(const SwapchainRequest& r) {
  // TRANSFER_SRC: the daemon copies out of the image. The attachment usage of the format's kind
  // is always present: the frame path keeps the image in that layout while the app owns it.
  VkImageUsageFlags usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
  usage |= isDepthFormat(VkFormat(r.format)) ? VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT
                                             : VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
  if (r.usageFlags & xr_usage::unorderedAccess) usage |= VK_IMAGE_USAGE_STORAGE_BIT;
  if (r.usageFlags & xr_usage::transferDst) usage |= VK_IMAGE_USAGE_TRANSFER_DST_BIT;
  if (r.usageFlags & xr_usage::sampled) usage |= VK_IMAGE_USAGE_SAMPLED_BIT;
  if (r.usageFlags & xr_usage::inputAttachment) usage |= VK_IMAGE_USAGE_INPUT_ATTACHMENT_BIT;

  VkImageCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
  info.flags = (r.usageFlags & xr_usage::mutableFormat) ? VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT : 0;
  // A cube map (protocol 1.6): 6 faces per array element, +X -X +Y -Y +Z -Z, as Vulkan orders them.
  if (r.faceCount == 6) info.flags |= VK_IMAGE_CREATE_CUBE_COMPATIBLE_BIT;
  info.imageType = VK_IMAGE_TYPE_2D;
  info.format = static_cast<VkFormat>(r.format);
  info.extent = {r.width, r.height, 1};
  info.mipLevels = r.mipCount;
  info.arrayLayers = r.arraySize * (r.faceCount == 6 ? 6 : 1);
  info.samples = static_cast<VkSampleCountFlagBits>(r.sampleCount);
  info.tiling = VK_IMAGE_TILING_OPTIMAL;
  info.usage = usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  return info;
}

const std::vector<VkFormat>& candidateSwapchainFormats() {
  static const std::vector<VkFormat> formats = {
      VK_FORMAT_R8G8B8A8_SRGB,  VK_FORMAT_B8G8R8A8_SRGB,       VK_FORMAT_R8G8B8A8_UNORM,
      VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_R16G16B16A16_SFLOAT, VK_FORMAT_D32_SFLOAT,
      VK_FORMAT_D16_UNORM,      VK_FORMAT_D24_UNORM_S8_UINT,   VK_FORMAT_D32_SFLOAT_S8_UINT,
  };
  return formats;
}

uint32_t findMemoryType(const VkPhysicalDeviceMemoryProperties& props, uint32_t typeBits,
                        VkMemoryPropertyFlags wanted) {
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
    if ((typeBits & (1u << i)) && (props.memoryTypes[i].propertyFlags & wanted) == wanted) return i;
  }
  return UINT32_MAX;
}

Result<ImageView> createImageView(VkDevice device, VkImage image, VkFormat format, VkImageViewType type,
                                  uint32_t layers) {
  VkImageViewCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO;
  info.image = image;
  info.viewType = type;
  info.format = format;
  info.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, layers};
  VkImageView view;
  if (auto s = check(vkCreateImageView(device, &info, nullptr, &view), "vkCreateImageView"); !s) return s.error();
  return ImageView(device, view);
}

Result<Memory> bindDeviceLocalMemory(VkDevice device, const VkPhysicalDeviceMemoryProperties& props, VkImage image,
                                     const char* what, bool exportOpaqueFd, MemoryPlacement* placement) {
  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(device, image, &req);
  // Exportable memory is a dedicated allocation, as the shared images are.
  VkMemoryDedicatedAllocateInfo dedicated{};
  dedicated.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO;
  dedicated.image = image;
  VkExportMemoryAllocateInfo exportInfo{};
  exportInfo.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO;
  exportInfo.pNext = &dedicated;
  exportInfo.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkMemoryAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  alloc.pNext = exportOpaqueFd ? &exportInfo : nullptr;
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = findMemoryType(props, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (alloc.memoryTypeIndex == UINT32_MAX) {
    return makeError(ErrorCode::internal, "no device-local memory type for the {} image", what);
  }
  VkDeviceMemory memory;
  if (auto s = check(vkAllocateMemory(device, &alloc, nullptr, &memory), "vkAllocateMemory"); !s) return s.error();
  Memory owned(device, memory);
  if (auto s = check(vkBindImageMemory(device, image, memory, 0), "vkBindImageMemory"); !s) return s.error();
  if (placement != nullptr) *placement = {alloc.allocationSize, alloc.memoryTypeIndex};
  return owned;
}

Result<DeviceBuffer> createBuffer(VkDevice device, const VkPhysicalDeviceMemoryProperties& props, VkDeviceSize size,
                                  VkBufferUsageFlags usage, VkMemoryPropertyFlags memoryFlags) {
  DeviceBuffer out;
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.size = size;
  info.usage = usage;
  VkBuffer buffer;
  if (auto s = check(vkCreateBuffer(device, &info, nullptr, &buffer), "vkCreateBuffer"); !s) return s.error();
  out.buffer = Buffer(device, buffer);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, buffer, &req);
  VkMemoryAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = findMemoryType(props, req.memoryTypeBits, memoryFlags);
  if (alloc.memoryTypeIndex == UINT32_MAX) {
    return makeError(ErrorCode::internal, "no memory type with flags {:#x} for a buffer", memoryFlags);
  }
  VkDeviceMemory memory;
  if (auto s = check(vkAllocateMemory(device, &alloc, nullptr, &memory), "vkAllocateMemory(buffer)"); !s) {
    return s.error();
  }
  out.memory = Memory(device, memory);
  if (auto s = check(vkBindBufferMemory(device, buffer, memory, 0), "vkBindBufferMemory"); !s) return s.error();
  return out;
}

Result<HostBuffer> createHostBuffer(VkDevice device, const VkPhysicalDeviceMemoryProperties& props, VkDeviceSize size,
                                    VkBufferUsageFlags usage) {
  auto created = createBuffer(device, props, size, usage,
                              VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  if (!created) return created.error();
  HostBuffer out;
  out.memory = std::move(created.value().memory);
  out.buffer = std::move(created.value().buffer);
  if (auto s = check(vkMapMemory(device, out.memory.get(), 0, size, 0, &out.mapped), "vkMapMemory"); !s) {
    return s.error();
  }
  out.size = size;
  return out;
}

Result<Semaphore> createSemaphore(VkDevice device, VkSemaphoreType type, bool exportOpaqueFd) {
  VkSemaphoreTypeCreateInfo typeInfo{};
  typeInfo.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  typeInfo.semaphoreType = type;
  VkExportSemaphoreCreateInfo exportInfo{};
  exportInfo.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO;
  exportInfo.pNext = type == VK_SEMAPHORE_TYPE_TIMELINE ? &typeInfo : nullptr;
  exportInfo.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkSemaphoreCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  info.pNext = exportOpaqueFd ? static_cast<const void*>(&exportInfo) : exportInfo.pNext;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  if (auto s = check(vkCreateSemaphore(device, &info, nullptr, &semaphore), "vkCreateSemaphore"); !s) return s.error();
  return Semaphore(device, semaphore);
}

Status signalTimeline(VkDevice device, VkSemaphore semaphore, uint64_t value) {
  VkSemaphoreSignalInfo signal{};
  signal.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
  signal.semaphore = semaphore;
  signal.value = value;
  return check(vkSignalSemaphore(device, &signal), "vkSignalSemaphore");
}

std::vector<const char*> requiredDeviceExtensions() { return {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME}; }

const char* semaphoreFdExtension() { return VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME; }

bool deviceHasExtension(VkPhysicalDevice device, const char* name) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> props(count);
  vkEnumerateDeviceExtensionProperties(device, nullptr, &count, props.data());
  for (const auto& p : props) {
    if (std::strcmp(p.extensionName, name) == 0) return true;
  }
  return false;
}

PhysicalDeviceQueries PhysicalDeviceQueries::core() {
  return {vkGetPhysicalDeviceProperties2, vkGetPhysicalDeviceExternalSemaphoreProperties, vkGetPhysicalDeviceFeatures2};
}

PhysicalDeviceQueries PhysicalDeviceQueries::khr(VkInstance instance) {
  return {reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2>(
              vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceProperties2KHR")),
          reinterpret_cast<PFN_vkGetPhysicalDeviceExternalSemaphoreProperties>(
              vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceExternalSemaphorePropertiesKHR")),
          reinterpret_cast<PFN_vkGetPhysicalDeviceFeatures2>(
              vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceFeatures2KHR"))};
}

DeviceFacts queryDeviceFacts(VkPhysicalDevice device, const PhysicalDeviceQueries& queries) {
  DeviceFacts facts;
  if (queries.properties2 == nullptr) return facts;  // all-zero UUIDs match no daemon
  VkPhysicalDeviceIDProperties id{};
  id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
  VkPhysicalDeviceProperties2 props{};
  props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  props.pNext = &id;
  queries.properties2(device, &props);

  std::memcpy(facts.deviceUuid.data(), id.deviceUUID, VK_UUID_SIZE);
  std::memcpy(facts.driverUuid.data(), id.driverUUID, VK_UUID_SIZE);
  facts.name = props.properties.deviceName;

  // Binary semaphores must be exportable and importable as OPAQUE_FD.
  if (queries.externalSemaphoreProperties != nullptr &&
      deviceHasExtension(device, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME)) {
    VkPhysicalDeviceExternalSemaphoreInfo info{};
    info.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO;
    info.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkExternalSemaphoreProperties ext{};
    ext.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES;
    queries.externalSemaphoreProperties(device, &info, &ext);
    const VkExternalSemaphoreFeatureFlags both =
        VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT | VK_EXTERNAL_SEMAPHORE_FEATURE_IMPORTABLE_BIT;
    facts.externalSemaphoreFd = (ext.externalSemaphoreFeatures & both) == both;

    // Timeline semaphores (Vulkan 1.2, or VK_KHR_timeline_semaphore) shared the same way.
    const bool timelineApi = props.properties.apiVersion >= VK_API_VERSION_1_2 ||
                             deviceHasExtension(device, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME);
    VkPhysicalDeviceTimelineSemaphoreFeatures timelineFeature{};
    timelineFeature.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES;
    if (facts.externalSemaphoreFd && timelineApi && queries.features2 != nullptr) {
      VkPhysicalDeviceFeatures2 features{};
      features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
      features.pNext = &timelineFeature;
      queries.features2(device, &features);
    }
    if (timelineFeature.timelineSemaphore) {
      VkSemaphoreTypeCreateInfo type{};
      type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
      type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
      info.pNext = &type;
      VkExternalSemaphoreProperties timelineExt{};
      timelineExt.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES;
      queries.externalSemaphoreProperties(device, &info, &timelineExt);
      facts.timelineSemaphoreFd = (timelineExt.externalSemaphoreFeatures & both) == both;
    }
  }
  return facts;
}

}  // namespace xrc::vk
