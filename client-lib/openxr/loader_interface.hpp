// The loader <-> runtime negotiation structures of the OpenXR loader interface (1.0). Debian's
// libopenxr-dev 1.0.20 does not ship loader_interfaces.h, so they are declared here as the
// loader documentation specifies them.
#pragma once

#include <openxr/openxr.h>

#include <cstddef>
#include <cstdint>

extern "C" {

enum XrLoaderInterfaceStructs {
  XR_LOADER_INTERFACE_STRUCT_UNINTIALIZED = 0,
  XR_LOADER_INTERFACE_STRUCT_LOADER_INFO,
  XR_LOADER_INTERFACE_STRUCT_API_LAYER_REQUEST,
  XR_LOADER_INTERFACE_STRUCT_RUNTIME_REQUEST,
  XR_LOADER_INTERFACE_STRUCT_API_LAYER_CREATE_INFO,
  XR_LOADER_INTERFACE_STRUCT_API_LAYER_NEXT_INFO,
};

#define XR_LOADER_INFO_STRUCT_VERSION 1
struct XrNegotiateLoaderInfo {
  XrLoaderInterfaceStructs structType;
  uint32_t structVersion;
  size_t structSize;
  uint32_t minInterfaceVersion;
  uint32_t maxInterfaceVersion;
  XrVersion minApiVersion;
  XrVersion maxApiVersion;
};

#define XR_RUNTIME_INFO_STRUCT_VERSION 1
struct XrNegotiateRuntimeRequest {
  XrLoaderInterfaceStructs structType;
  uint32_t structVersion;
  size_t structSize;
  uint32_t runtimeInterfaceVersion;
  XrVersion runtimeApiVersion;
  PFN_xrGetInstanceProcAddr getInstanceProcAddr;
};

#define XR_CURRENT_LOADER_RUNTIME_VERSION 1
}
