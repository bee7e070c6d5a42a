// Conversions between the generated wire types and the project's plain types, plus the
// fd-carrying capability. Shared by daemon and client so both read the wire the same way.
#pragma once

#include <capnp/capability.h>
#include <kj/async.h>
#include <kj/io.h>
#include <vulkan/vulkan.h>

#include "xrc.capnp.h"
#include "xrc/input.hpp"
#include "xrc/pose.hpp"
#include "xrc/protocol_rules.hpp"
#include "xrc/result.hpp"
#include "xrc/unique_fd.hpp"

namespace xrc {

void toWire(const Error& error, wire::Error::Builder out);
inline void setOk(wire::Error::Builder out) { out.setCode(wire::ErrorCode::NONE); }
// `none`, or the status's error: the inverse of fromWire below.
inline void toWire(const Status& status, wire::Error::Builder out) {
  if (status)
    setOk(out);
  else
    toWire(status.error(), out);
}
Status fromWire(wire::Error::Reader error);

wire::SyncMode toWire(SyncMode mode);
SyncMode fromWire(wire::SyncMode mode);

wire::EnvironmentBlendMode toWire(EnvironmentBlendMode mode);
EnvironmentBlendMode fromWire(wire::EnvironmentBlendMode mode);
std::vector<EnvironmentBlendMode> fromWire(capnp::List<wire::EnvironmentBlendMode>::Reader modes);

void toWire(const DeviceFacts& facts, wire::DeviceIdentity::Builder out);
Result<DeviceFacts> fromWire(wire::DeviceIdentity::Reader in);

void toWire(const Pose& pose, wire::Pose::Builder out);
// A pose with missing components reads as identity components; validity is checked separately.
Pose fromWire(wire::Pose::Reader in);

// Controller input (1.7). fromWire keeps at most two hands and kMaxComponentsPerHand components
// each, and marks the snapshot present only when hands were sent.
void toWire(const InputSnapshot& input, wire::InputState::Builder out);
InputSnapshot fromWire(wire::InputState::Reader in);

void toWire(const SwapchainRequest& request, wire::SwapchainCreateInfo::Builder out);
SwapchainRequest fromWire(wire::SwapchainCreateInfo::Reader in);

void toWire(const VkImageCreateInfo& info, wire::ImageCreateInfo::Builder out);
VkImageCreateInfo fromWire(wire::ImageCreateInfo::Reader in);

// Serves one owned descriptor through Capability::Server::getFd(); the receiver dup()s it.
class FdCarrierServer final : public wire::FdCarrier::Server {
 public:
  explicit FdCarrierServer(UniqueFd fd) : fd_(std::move(fd)) {}
  kj::Maybe<int> getFd() override { return fd_.get(); }

 private:
  UniqueFd fd_;
};

wire::FdCarrier::Client makeFdCarrier(UniqueFd fd);
// Resolves to an owned duplicate of the fd attached to `carrier`, or an Error if none came.
kj::Promise<Result<UniqueFd>> receiveFd(wire::FdCarrier::Client carrier, const char* what);

}  // namespace xrc
