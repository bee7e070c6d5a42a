// VK_EXT_host_image_copy, for Vulkan headers older than 1.3.258 (Debian 12 has 1.3.239): the
// values and structures the daemon uses, as the registry defines them. With newer headers
// these come from vulkan_core.h.
#pragma once

#include <vulkan/vulkan.h>

#ifndef VK_EXT_host_image_copy
#define VK_EXT_host_image_copy 1
#define VK_EXT_HOST_IMAGE_COPY_EXTENSION_NAME "VK_EXT_host_image_copy"

inline constexpr VkStructureType VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_IMAGE_COPY_FEATURES_EXT =
    VkStructureType(1000270000);
inline constexpr VkStructureType VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_IMAGE_COPY_PROPERTIES_EXT =
    VkStructureType(1000270001);
inline constexpr VkStructureType VK_STRUCTURE_TYPE_HOST_IMAGE_LAYOUT_TRANSITION_INFO_EXT = VkStructureType(1000270006);
inline constexpr VkStructureType VK_STRUCTURE_TYPE_COPY_IMAGE_TO_IMAGE_INFO_EXT = VkStructureType(1000270007);
inline constexpr VkImageUsageFlagBits VK_IMAGE_USAGE_HOST_TRANSFER_BIT_EXT = VkImageUsageFlagBits(0x00400000);
inline constexpr VkFormatFeatureFlags2 VK_FORMAT_FEATURE_2_HOST_IMAGE_TRANSFER_BIT_EXT = 0x400000000000ULL;

typedef VkFlags VkHostImageCopyFlagsEXT;

typedef struct VkPhysicalDeviceHostImageCopyFeaturesEXT {
  VkStructureType sType;
  void* pNext;
  VkBool32 hostImageCopy;
} VkPhysicalDeviceHostImageCopyFeaturesEXT;

typedef struct VkPhysicalDeviceHostImageCopyPropertiesEXT {
  VkStructureType sType;
  void* pNext;
  uint32_t copySrcLayoutCount;
  VkImageLayout* pCopySrcLayouts;
  uint32_t copyDstLayoutCount;
  VkImageLayout* pCopyDstLayouts;
  uint8_t optimalTilingLayoutUUID[VK_UUID_SIZE];
  VkBool32 identicalMemoryTypeRequirements;
} VkPhysicalDeviceHostImageCopyPropertiesEXT;

typedef struct VkCopyImageToImageInfoEXT {
  VkStructureType sType;
  const void* pNext;
  VkHostImageCopyFlagsEXT flags;
  VkImage srcImage;
  VkImageLayout srcImageLayout;
  VkImage dstImage;
  VkImageLayout dstImageLayout;
  uint32_t regionCount;
  const VkImageCopy2* pRegions;
} VkCopyImageToImageInfoEXT;

typedef struct VkHostImageLayoutTransitionInfoEXT {
  VkStructureType sType;
  const void* pNext;
  VkImage image;
  VkImageLayout oldLayout;
  VkImageLayout newLayout;
  VkImageSubresourceRange subresourceRange;
} VkHostImageLayoutTransitionInfoEXT;

typedef VkResult(VKAPI_PTR* PFN_vkCopyImageToImageEXT)(VkDevice device,
                                                       const VkCopyImageToImageInfoEXT* pCopyImageToImageInfo);
typedef VkResult(VKAPI_PTR* PFN_vkTransitionImageLayoutEXT)(VkDevice device, uint32_t transitionCount,
                                                            const VkHostImageLayoutTransitionInfoEXT* pTransitions);
#endif
