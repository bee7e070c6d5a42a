#include "xrc/wire_convert.hpp"

#include <fcntl.h>

#include <cstring>

namespace xrc {

static_assert(kProtocolMajor == wire::PROTOCOL_MAJOR && kProtocolMinor == wire::PROTOCOL_MINOR,
              "protocol_rules.hpp and xrc.capnp disagree on the protocol version");

void toWire(const Error& error, wire::Error::Builder out) {
  out.setCode(static_cast<wire::ErrorCode>(error.code));
  out.setMessage(error.message);
}

Status fromWire(wire::Error::Reader error) {
  if (error.getCode() == wire::ErrorCode::NONE) return {};
  return Error{static_cast<ErrorCode>(error.getCode()), error.getMessage().cStr()};
}

wire::SyncMode toWire(SyncMode mode) {
  switch (mode) {
    case SyncMode::binary:
      return wire::SyncMode::BINARY;
    case SyncMode::timeline:
      return wire::SyncMode::TIMELINE;
    case SyncMode::host:
      break;
  }
  return wire::SyncMode::HOST;
}
SyncMode fromWire(wire::SyncMode mode) {
  switch (mode) {
    case wire::SyncMode::BINARY:
      return SyncMode::binary;
    case wire::SyncMode::TIMELINE:
      return SyncMode::timeline;
    default:
      return SyncMode::host;
  }
}

// The wire enum's ordinals are OpenXR's values minus one. An ordinal from a newer peer maps past
// the known modes, so that validation rejects it instead of taking it for another.
wire::EnvironmentBlendMode toWire(EnvironmentBlendMode mode) {
  return static_cast<wire::EnvironmentBlendMode>(uint32_t(mode) - 1);
}
EnvironmentBlendMode fromWire(wire::EnvironmentBlendMode mode) {
  return static_cast<EnvironmentBlendMode>(uint32_t(mode) + 1);
}
std::vector<EnvironmentBlendMode> fromWire(capnp::List<wire::EnvironmentBlendMode>::Reader modes) {
  std::vector<EnvironmentBlendMode> out;
  for (auto m : modes) out.push_back(fromWire(m));
  return out;
}

void toWire(const DeviceFacts& facts, wire::DeviceIdentity::Builder out) {
  out.setDeviceUuid(kj::arrayPtr(facts.deviceUuid.data(), facts.deviceUuid.size()));
  out.setDriverUuid(kj::arrayPtr(facts.driverUuid.data(), facts.driverUuid.size()));
  out.setDeviceName(facts.name);
}

Result<DeviceFacts> fromWire(wire::DeviceIdentity::Reader in) {
  DeviceFacts facts;
  if (in.getDeviceUuid().size() != 16 || in.getDriverUuid().size() != 16) {
    return makeError(ErrorCode::invalidArgument, "device and driver UUIDs must be 16 bytes (got {} and {})",
                     in.getDeviceUuid().size(), in.getDriverUuid().size());
  }
  std::memcpy(facts.deviceUuid.data(), in.getDeviceUuid().begin(), 16);
  std::memcpy(facts.driverUuid.data(), in.getDriverUuid().begin(), 16);
  facts.name = in.getDeviceName().cStr();
  return facts;
}

void toWire(const Pose& pose, wire::Pose::Builder out) {
  auto o = out.initOrientation(4);
  for (uint32_t i = 0; i < 4; ++i) o.set(i, pose.orientation[i]);
  auto p = out.initPosition(3);
  for (uint32_t i = 0; i < 3; ++i) p.set(i, pose.position[i]);
}

Pose fromWire(wire::Pose::Reader in) {
  Pose out;
  auto o = in.getOrientation();
  if (o.size() == 4) {
    for (uint32_t i = 0; i < 4; ++i) out.orientation[i] = o[i];
  }
  auto p = in.getPosition();
  if (p.size() == 3) {
    for (uint32_t i = 0; i < 3; ++i) out.position[i] = p[i];
  }
  return out;
}

void toWire(const InputSnapshot& input, wire::InputState::Builder out) {
  if (!input.present) return;
  auto hands = out.initHands(uint32_t(input.hands.size()));
  for (uint32_t h = 0; h < hands.size(); ++h) {
    const HandInput& in = input.hands[h];
    auto hand = hands[h];
    hand.setProfile(in.profile);
    auto components = hand.initComponents(uint32_t(in.components.size()));
    for (uint32_t i = 0; i < components.size(); ++i) {
      components[i].setPath(in.components[i].path);
      components[i].setX(in.components[i].x);
      components[i].setY(in.components[i].y);
      components[i].setChangedAt(in.components[i].changedNs);
    }
    hand.setGripValid(in.grip.has_value());
    toWire(in.grip.value_or(Pose{}), hand.initGrip());
    hand.setAimValid(in.aim.has_value());
    toWire(in.aim.value_or(Pose{}), hand.initAim());
  }
}

InputSnapshot fromWire(wire::InputState::Reader in) {
  InputSnapshot out;
  auto hands = in.getHands();
  out.present = hands.size() > 0;
  for (uint32_t h = 0; h < hands.size() && h < out.hands.size(); ++h) {
    auto hand = hands[h];
    HandInput& to = out.hands[h];
    to.profile = hand.getProfile().cStr();
    auto components = hand.getComponents();
    for (uint32_t i = 0; i < components.size() && i < kMaxComponentsPerHand; ++i) {
      to.components.push_back(InputComponentState{components[i].getPath().cStr(), components[i].getX(),
                                                  components[i].getY(), components[i].getChangedAt()});
    }
    if (hand.getGripValid()) to.grip = fromWire(hand.getGrip());
    if (hand.getAimValid()) to.aim = fromWire(hand.getAim());
  }
  return out;
}

void toWire(const SwapchainRequest& r, wire::SwapchainCreateInfo::Builder out) {
  out.setCreateFlags(r.createFlags);
  out.setUsageFlags(r.usageFlags);
  out.setFormat(r.format);
  out.setSampleCount(r.sampleCount);
  out.setWidth(r.width);
  out.setHeight(r.height);
  out.setFaceCount(r.faceCount);
  out.setArraySize(r.arraySize);
  out.setMipCount(r.mipCount);
}

SwapchainRequest fromWire(wire::SwapchainCreateInfo::Reader in) {
  SwapchainRequest r;
  r.createFlags = in.getCreateFlags();
  r.usageFlags = in.getUsageFlags();
  r.format = in.getFormat();
  r.sampleCount = in.getSampleCount();
  r.width = in.getWidth();
  r.height = in.getHeight();
  r.faceCount = in.getFaceCount();
  r.arraySize = in.getArraySize();
  r.mipCount = in.getMipCount();
  return r;
}

void toWire(const VkImageCreateInfo& info, wire::ImageCreateInfo::Builder out) {
  out.setFlags(info.flags);
  out.setImageType(info.imageType);
  out.setFormat(info.format);
  out.setWidth(info.extent.width);
  out.setHeight(info.extent.height);
  out.setDepth(info.extent.depth);
  out.setMipLevels(info.mipLevels);
  out.setArrayLayers(info.arrayLayers);
  out.setSamples(info.samples);
  out.setTiling(info.tiling);
  out.setUsage(info.usage);
  out.setSharingMode(info.sharingMode);
}

VkImageCreateInfo fromWire(wire::ImageCreateInfo::Reader in) {
  VkImageCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
  info.flags = in.getFlags();
  info.imageType = static_cast<VkImageType>(in.getImageType());
  info.format = static_cast<VkFormat>(in.getFormat());
  info.extent = {in.getWidth(), in.getHeight(), in.getDepth()};
  info.mipLevels = in.getMipLevels();
  info.arrayLayers = in.getArrayLayers();
  info.samples = static_cast<VkSampleCountFlagBits>(in.getSamples());
  info.tiling = static_cast<VkImageTiling>(in.getTiling());
  info.usage = in.getUsage();
  info.sharingMode = static_cast<VkSharingMode>(in.getSharingMode());
  info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  return info;
}

wire::FdCarrier::Client makeFdCarrier(UniqueFd fd) { return kj::heap<FdCarrierServer>(std::move(fd)); }

kj::Promise<Result<UniqueFd>> receiveFd(wire::FdCarrier::Client carrier, const char* what) {
  return carrier.getFd().then([what](kj::Maybe<int> maybeFd) -> Result<UniqueFd> {
    KJ_IF_MAYBE (fd, maybeFd) {
      int owned = ::fcntl(*fd, F_DUPFD_CLOEXEC, 0);
      if (owned < 0) return makeError(ErrorCode::internal, "dup of the {} fd failed", what);
      return UniqueFd(owned);
    }
    return makeError(ErrorCode::internal, "no file descriptor arrived for the {} (is fd passing enabled?)", what);
  });
}

}  // namespace xrc
