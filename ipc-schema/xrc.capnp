@0xd3cabe5b39c78f14;
# The wire contract between xr-compositord and its clients (protocol version 1).
# docs/PROTOCOL.md explains every call; keep it in the same commit as changes here.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("xrc::wire");

const protocolMajor :UInt16 = 1;
const protocolMinor :UInt16 = 22;
# Minor 1: view poses/fovs, head pose with waitFrame, locateHead.
# Minor 2: overlay sessions, session roles, per-frame stats, Control.setPrimary/kick.
# Minor 3: environment blend modes (system description, endFrame, status); LOCAL space changes
#          (waitFrame, Control.recenter).
# Minor 4: fewer calls per frame: release may stand for the image's acquire and wait too, endFrame
#          for the frame's beginFrame; the system description names the daemon's minor; occlusion
#          culling is reported (DisplayedLayer.drawn, DaemonStatus.layerViewsCulled).
# Minor 5: one call per frame: endFrame may carry the frame's releases and stand for the next
#          waitFrame (its answer then comes when that wait's would have).
# Minor 6: static swapchains (SwapchainInfo.createFlags XR_SWAPCHAIN_CREATE_STATIC_IMAGE_BIT: one
#          image, released once); cube map swapchains (faceCount 6); cylinder, equirect and cube
#          layers.
# Minor 7: controller input with each frame's timing (FrameTiming.input, focused session only),
#          haptics (Session.applyHaptic/stopHaptic), simulated controllers (Control.setInput,
#          setHandPose) and haptic counts in status; per-frame eye poses and fovs
#          (FrameTiming.views); depth sub-images reported by readDisplay.
# Minor 8: limits on what a client can make the daemon spend, hung clients (status fields).
# Minor 9: color scale and bias per layer (Layer.colorScale/colorBias); the display's own
#          visibility masks per view (ViewDescription.visibilityMasks).
# Minor 10: the window output (DaemonStatus.windowOutput); reprojection counts
#          (ClientStatus.framesReprojected).
# Minor 11: the timeline sync mode: one exported timeline semaphore pair per swapchain
#          (createSwapchain's renderingTimeline/copyingTimeline), release values
#          (Swapchain.release's and ImageRelease's renderingValue).
# Minor 12: DaemonStatus.displayFramesComposed.
# Minor 13: timeline mode, a client of 1.13 or later: an endFrame's releases are answered once
#          accepted, not once the client's rendering is done; each one's settlement (its copy or
#          pass-through submitted, or why not) comes later, exactly once, with a frame timing
#          (FrameTiming.settledReleases) or the answer to Session.settleReleases.
# Minor 14: DaemonStatus.copyBatches/copiesBatched (copy_batch_us).
# Minor 15: DaemonStatus.framesHeld/framesHeldPastLatch (copy_batch_before_latch_us).
# Minor 16: ClientStatus.hostCopies/hostCopyUs (host_copies).
# Minor 17: DaemonStatus.copyQueueSubmissions.
# Minor 18: endFrame's implied wait answered at once (answerNextAtOnce, FrameTiming.wakeTime,
#          ClientStatus.waitsAnsweredAtOnce), with the state changes before its wake
#          (Session.watchState).
# Minor 19: DaemonStatus.rpcThreadNice.
# Minor 20: DaemonStatus.copyBatchLeadUs.
# Minor 21: DaemonStatus.rpcThreadCpu.
# Minor 22: DaemonStatus.rpcThreadMoves (rpc_cpu auto).

# --- errors -------------------------------------------------------------------------------------
# Every call answers with an Error; code `none` means success. Errors are data, not exceptions, so
# that clients (and the OpenXR face) can map them onto their own result codes.

enum ErrorCode {
  none @0;
  invalidArgument @1;    # a value is malformed or outside its documented range
  callOrder @2;          # the call is valid but not now (e.g. release without acquire)
  versionMismatch @3;    # protocol major differs
  deviceMismatch @4;     # client and daemon are not on the same Vulkan device/driver
  unsupported @5;        # a valid request this daemon cannot serve (format, sample count...)
  notFound @6;           # a handle/id that does not exist in this session
  exhausted @7;          # limits reached (images all acquired, too many swapchains...)
  timeout @8;            # a bounded wait expired (runtime image never became free...)
  internal @9;           # the daemon failed (Vulkan error); the session may be unusable
  permissionDenied @10;  # the caller may not use this interface
}

struct Error {
  code @0 :ErrorCode;
  message @1 :Text;
}

# --- negotiation --------------------------------------------------------------------------------

enum SyncMode {
  host @0;     # no external semaphores: client waits its release fence, daemon its copy fence
  binary @1;   # per-image exported binary semaphores rendering_done / copying_done (seed 000)
  # 1.11: one exported timeline pair per swapchain. The client's release signals rendering_done
  # at the release's value; the daemon waits for that value on the CPU (bounded) before it
  # submits the copy, which signals copying_done at the same value.
  timeline @2;
}

struct Version {
  major @0 :UInt16;
  minor @1 :UInt16;
}

struct DeviceIdentity {
  deviceUuid @0 :Data;   # VkPhysicalDeviceIDProperties::deviceUUID (16 bytes)
  driverUuid @1 :Data;   # VkPhysicalDeviceIDProperties::driverUUID (16 bytes)
  deviceName @2 :Text;   # for messages only
}

struct ClientInfo {
  version @0 :Version;
  name @1 :Text;                       # application name, shown by xr-compositorctl
  pid @2 :UInt32;                      # informational; the daemon trusts SO_PEERCRED instead
  device @3 :DeviceIdentity;
  hasExternalSemaphoreFd @4 :Bool;     # client device can import OPAQUE_FD binary semaphores
  # An overlay session (OpenXR's XR_EXTX_overlay) is always visible and drawn over the primary
  # application's layers, ordered by `overlayPlacement` (higher on top, 0..maxOverlayPlacement).
  # A normal session is either the primary (visible and focused) or hidden.
  overlay @5 :Bool;
  overlayPlacement @6 :UInt32;
  # 1.11: the client's VkDevice has the timelineSemaphore feature enabled and can import
  # OPAQUE_FD timeline semaphores.
  hasTimelineSemaphoreFd @7 :Bool;
}

struct ViewDescription {
  recommendedWidth @0 :UInt32;
  recommendedHeight @1 :UInt32;
  maxWidth @2 :UInt32;
  maxHeight @3 :UInt32;
  eyeInHead @4 :Pose;             # the view's pose relative to the head (VIEW space)
  fov @5 :List(Float32);          # angleLeft angleRight angleUp angleDown (radians)
  # 1.9: the display's own masks for this view (XR_KHR_visibility_mask), where its runtime has
  # them; empty: the view's whole rectangle is visible.
  visibilityMasks @6 :List(VisibilityMask);
}

struct VisibilityMask {
  type @0 :UInt32;                # XrVisibilityMaskTypeKHR: 1 hidden mesh, 2 visible mesh, 3 line loop
  vertices @1 :List(Float32);     # x y pairs on the view's z = -1 plane
  indices @2 :List(UInt32);       # triangles (meshes) or the loop, into vertices
}

struct SystemDescription {
  daemonVersion @0 :Text;
  backend @1 :Text;
  views @2 :List(ViewDescription);
  refreshHz @3 :Float32;
  swapchainFormats @4 :List(Int64);    # VkFormat values, preferred first
  device @5 :DeviceIdentity;           # the daemon's device; clients must match it
  maxLayers @6 :UInt32;                # per endFrame
  maxSwapchains @7 :UInt32;            # per session
  maxArrayLayers @8 :UInt32;
  daemonHasExternalSemaphoreFd @9 :Bool;
  # Spaces: the backend tracks in STAGE space (floor at y = 0, y up). LOCAL is gravity-aligned at
  # the head's starting pose; `localInStage` places it. Stage bounds: width (x) and depth (z) in
  # meters, both 0 when the backend knows none.
  localInStage @10 :Pose;
  stageBoundsWidth @11 :Float32;
  stageBoundsDepth @12 :Float32;
  maxOverlayPlacement @13 :UInt32;
  # The display's environment blend modes, preferred first (OpenXR's; empty from daemons before
  # 1.3, which display opaque only).
  environmentBlendModes @14 :List(EnvironmentBlendMode);
  # The daemon's protocol minor (0 from daemons before 1.4): a client uses the calls of the
  # lower of its own minor and this one.
  protocolMinor @15 :UInt16;
  # 1.11: the daemon's device can export OPAQUE_FD timeline semaphores.
  daemonHasTimelineSemaphoreFd @16 :Bool;
}

enum EnvironmentBlendMode {
  opaque @0;
  additive @1;
  alphaBlend @2;
}

# --- file descriptors ---------------------------------------------------------------------------
# A descriptor travels only attached to a capability (the server object overrides getFd()).
# The receiver calls getFd() on the capability and dup()s the result to own it.

interface FdCarrier {}

struct ImageCreateInfo {
  # The exact VkImageCreateInfo of the shared images (no pNext beyond external memory).
  flags @0 :UInt32;
  imageType @1 :UInt32;
  format @2 :Int64;
  width @3 :UInt32;
  height @4 :UInt32;
  depth @5 :UInt32;
  mipLevels @6 :UInt32;
  arrayLayers @7 :UInt32;
  samples @8 :UInt32;
  tiling @9 :UInt32;
  usage @10 :UInt32;
  sharingMode @11 :UInt32;
}

struct SharedImage {
  memory @0 :FdCarrier;          # OPAQUE_FD of a dedicated allocation
  allocationSize @1 :UInt64;
  memoryTypeIndex @2 :UInt32;
  dedicated @3 :Bool;
  renderingDone @4 :FdCarrier;   # binary mode only (null in host mode)
  copyingDone @5 :FdCarrier;     # binary mode only (null in host mode)
}

# --- swapchains ---------------------------------------------------------------------------------

struct SwapchainCreateInfo {
  createFlags @0 :UInt64;   # XrSwapchainCreateFlags: 0, or STATIC_IMAGE (0x2, minor 6)
  usageFlags @1 :UInt64;    # XrSwapchainUsageFlags
  format @2 :Int64;         # VkFormat
  sampleCount @3 :UInt32;
  width @4 :UInt32;
  height @5 :UInt32;
  faceCount @6 :UInt32;     # 1, or 6: a cube map (minor 6; its image has 6 layers per array element)
  arraySize @7 :UInt32;
  mipCount @8 :UInt32;
}

interface Swapchain {
  # Image calls follow OpenXR's order per image: acquire -> wait -> release. The client names the
  # image (it acquires in the order the daemon documents: round-robin from 0) so that no call
  # needs to wait for its answer; the daemon checks the order and answers errors.
  acquire @0 (index :UInt32) -> (error :Error);
  wait @1 (index :UInt32) -> (error :Error);
  # Answered once the copy into the runtime image is submitted (binary) or complete (host): only
  # then may the client acquire this image again.
  # `alsoAcquireAndWait` (1.4): the client sent no acquire and no wait for this image; the daemon
  # checks and applies all three steps, in order, as if they had come in separate calls (an
  # error leaves the image as it was). One call per image and frame instead of three.
  # `renderingValue` (1.11, timeline mode only): the value at which the client's release
  # submission signals the swapchain's rendering_done timeline; above every earlier release's of
  # this swapchain. The copy signals copying_done at the same value.
  release @2 (index :UInt32, alsoAcquireAndWait :Bool, renderingValue :UInt64) -> (error :Error);
  destroy @3 () -> (error :Error);
}

# --- frames -------------------------------------------------------------------------------------

struct Pose {
  orientation @0 :List(Float32);  # x y z w
  position @1 :List(Float32);     # x y z
}

struct Rect {
  x @0 :Int32;
  y @1 :Int32;
  width @2 :Int32;
  height @3 :Int32;
}

struct SubImage {
  swapchainId @0 :UInt32;
  imageRect @1 :Rect;
  arrayIndex @2 :UInt32;
}

struct ProjectionView {
  pose @0 :Pose;
  fov @1 :List(Float32);          # angleLeft angleRight angleUp angleDown (radians)
  subImage @2 :SubImage;
  depth @3 :DepthInfo;
  hasDepth @4 :Bool;
}

struct DepthInfo {
  subImage @0 :SubImage;
  minDepth @1 :Float32;
  maxDepth @2 :Float32;
  nearZ @3 :Float32;
  farZ @4 :Float32;
}

struct Layer {
  flags @0 :UInt64;               # XrCompositionLayerFlags
  union {
    projection @1 :List(ProjectionView);
    quad :group {
      subImage @2 :SubImage;
      pose @3 :Pose;
      width @4 :Float32;          # meters
      height @5 :Float32;
      eyeVisibility @6 :UInt32;   # XrEyeVisibility
    }
    # 1.6: XR_KHR_composition_layer_cylinder. The image covers `centralAngle` of a cylinder
    # around the pose's +y axis, centred on its -z direction; its height on the cylinder is
    # radius * centralAngle / aspectRatio. A radius of 0 or +infinity is infinitely far away.
    cylinder :group {
      subImage @7 :SubImage;
      pose @8 :Pose;
      radius @9 :Float32;         # meters
      centralAngle @10 :Float32;  # radians, (0, 2 pi]
      aspectRatio @11 :Float32;   # image width / height, > 0
      eyeVisibility @12 :UInt32;
    }
    # 1.6: XR_KHR_composition_layer_equirect (equirect2 is sent in this form). A direction of
    # longitude `lon` (0 along the pose's -z, positive to +x) and polar angle `pol` (0 at +y)
    # samples u = scale.x * (lon / 2 pi + 1/2) + bias.x, v = scale.y * pol / pi + bias.y; outside
    # [0, 1] nothing is drawn. A radius of 0 or +infinity is infinitely far away.
    equirect :group {
      subImage @13 :SubImage;
      pose @14 :Pose;
      radius @15 :Float32;
      scale @16 :List(Float32);   # x y
      bias @17 :List(Float32);    # x y
      eyeVisibility @18 :UInt32;
    }
    # 1.6: XR_KHR_composition_layer_cube. subImage names a cube map swapchain (faceCount 6; its
    # whole extent) and the cube's array element; a direction in the layer's orientation samples
    # the cube as Vulkan does. Always infinitely far: the pose's position is not used.
    cube :group {
      subImage @19 :SubImage;
      orientation @20 :List(Float32);  # x y z w, in STAGE
      eyeVisibility @21 :UInt32;
    }
  }
  # 1.9: XR_KHR_composition_layer_color_scale_bias. Each texel (r g b a) of the layer becomes
  # texel * colorScale + colorBias before it is blended (an unpremultiplied source is multiplied
  # by its new alpha afterwards). Both empty: no change; otherwise 4 finite values each.
  colorScale @22 :List(Float32);
  colorBias @23 :List(Float32);
}

struct FrameTiming {
  frameId @0 :UInt64;
  predictedDisplayTime @1 :Int64;    # ns, CLOCK_MONOTONIC
  predictedDisplayPeriod @2 :Int64;  # ns
  shouldRender @3 :Bool;
  # The head's (VIEW space's) predicted pose in STAGE space at predictedDisplayTime, so that
  # locating views and spaces for that time needs no further round trip.
  headInStage @4 :Pose;
  # The session's visibility and input focus as the daemon decides them (OpenXR's VISIBLE and
  # FOCUSED session states).
  visible @5 :Bool;
  focused @6 :Bool;
  # The daemon is shutting down: end the session now (OpenXR: STOPPING, then EXITING). The daemon
  # waits a bounded grace period for its clients to leave before it closes their connections.
  stopping @7 :Bool;
  # LOCAL's origin in STAGE space as of this answer (1.3), and how many times it has moved since
  # the daemon started (a recenter): a client that sees the count change tells its app (OpenXR:
  # XrEventDataReferenceSpaceChangePending for LOCAL).
  localInStage @8 :Pose;
  localSpaceChanges @9 :UInt32;
  # 1.7: the controllers as of this answer, for the focused session; no hands otherwise.
  input @10 :InputState;
  # 1.7: the views at predictedDisplayTime where the display says them per frame (a runtime under
  # the daemon: eye poses follow an IPD change, fovs may change); empty: the system description's.
  views @11 :List(EyeView);
  # 1.13: the settlements of releases answered before their copy (timeline mode, carried by an
  # endFrame) that no earlier answer carried, oldest first. The client may acquire such an image
  # again only once its settlement came (as it waits for a release's answer otherwise).
  settledReleases @12 :List(ReleaseSettlement);
  # 1.18: when the wait would have been answered (ns, CLOCK_MONOTONIC). An answer given at once
  # (endFrame's answerNextAtOnce) comes before it: the client starts the frame's work at this time,
  # not before.
  wakeTime @13 :Int64;
}

struct ReleaseSettlement {
  swapchainId @0 :UInt32;
  index @1 :UInt32;
  # none: the copy (or, over max_copy_mib_per_period, the pass-through) was submitted and signals
  # copying_done at the release's value; otherwise what the release would have been answered.
  error @2 :Error;
}

struct EyeView {
  eyeInHead @0 :Pose;
  fov @1 :List(Float32);          # angleLeft angleRight angleUp angleDown (radians)
}

# --- input (1.7) ---------------------------------------------------------------------------------
# The state of the controllers the daemon's display has, published to the focused session with
# every frame's timing, so reading input costs no call of its own. A component is named as in
# OpenXR's interaction profiles, relative to the hand ("/input/select/click", "/input/trigger/value",
# "/input/thumbstick" with x and y); components not listed read as 0 and unchanged.
struct InputComponent {
  path @0 :Text;
  x @1 :Float32;       # the value (a click: 0 or 1)
  y @2 :Float32;       # a vector2's y
  changedAt @3 :Int64;  # ns, CLOCK_MONOTONIC: when the value last changed
}

struct HandInput {
  # The interaction profile of the device in this hand ("/interaction_profiles/khr/simple_controller"),
  # empty when the hand has none.
  profile @0 :Text;
  components @1 :List(InputComponent);
  gripValid @2 :Bool;
  grip @3 :Pose;       # in STAGE at the timing's predictedDisplayTime
  aimValid @4 :Bool;
  aim @5 :Pose;
}

struct InputState {
  hands @0 :List(HandInput);   # [left, right]
}

struct ImageRelease {
  swapchainId @0 :UInt32;
  index @1 :UInt32;
  renderingValue @2 :UInt64;  # 1.11, timeline mode: as in Swapchain.release
}

interface Session {
  createSwapchain @0 (info :SwapchainCreateInfo)
      -> (error :Error, swapchain :Swapchain, id :UInt32, image :ImageCreateInfo,
          images :List(SharedImage), renderingTimeline :FdCarrier, copyingTimeline :FdCarrier);
  # renderingTimeline/copyingTimeline (1.11): timeline mode only (null otherwise); OPAQUE_FD of
  # the swapchain's timeline semaphores, both starting at 0.
  waitFrame @1 () -> (error :Error, timing :FrameTiming);
  beginFrame @2 (frameId :UInt64) -> (error :Error);
  # `alsoBegin` (1.4): the client sent no beginFrame for `frameId`; the daemon checks and applies
  # it first, as beginFrame would have (a frame begun and never ended is simply never sent).
  #
  # `releases` (1.5): image releases the client did not send as calls. The daemon applies each
  # first, in list order, exactly as `Swapchain.release(index, alsoAcquireAndWait = true)` calls
  # sent before this one would be (at most 64: kMaxReleasesPerEndFrame); `releaseErrors` answers them,
  # one per entry. They are applied even when the frame itself is refused.
  # `alsoWaitNext` (1.5): the client sent no waitFrame for its next frame; the daemon starts one
  # as this call arrives (also when the frame is refused) and answers this call with it, when a
  # waitFrame would have been answered: `next` and `nextError`. A client that asks for its next
  # frame much later than that should not use `next`; a waitFrame then replaces it, and the pacing
  # treats it as if `next` had never been handed out (docs/PROTOCOL.md).
  endFrame @3 (frameId :UInt64, displayTime :Int64, layers :List(Layer),
               environmentBlendMode :EnvironmentBlendMode, alsoBegin :Bool,
               releases :List(ImageRelease), alsoWaitNext :Bool, answerNextAtOnce :Bool)
      -> (error :Error, releaseErrors :List(Error), next :FrameTiming, nextError :Error);
  # The head's pose in STAGE space at `time` (ns, CLOCK_MONOTONIC), for times that no waitFrame
  # answer covered. `time` must be positive.
  locateHead @4 (time :Int64) -> (error :Error, headInStage :Pose);
  # 1.7: a vibration on a hand's output ("/output/haptic"): `durationNs` (-1: the device's
  # minimum pulse), `frequency` in Hz (0: the device's default), `amplitude` 0..1. Only the
  # focused session may vibrate (`callOrder` otherwise); a display without that output answers
  # `unsupported`.
  applyHaptic @5 (hand :UInt8, output :Text, durationNs :Int64, frequency :Float32, amplitude :Float32)
      -> (error :Error);
  stopHaptic @6 (hand :UInt8, output :Text) -> (error :Error);
  # 1.13: answered once the release of image `index` of swapchain `swapchainId` that an endFrame
  # carried and the daemon answered early has settled (at once when none is unsettled), with every
  # settlement no answer carried yet. For a client that wants to acquire that image and expects
  # no frame timing soon. At most 64 such calls wait per session (`exhausted`).
  settleReleases @7 (swapchainId :UInt32, index :UInt32) -> (error :Error, settled :List(ReleaseSettlement));
  # 1.18: answered once the daemon's count of state changes differs from `after` (at once when it
  # does already), with that count and the session's state then: for a client whose waits are
  # answered at once (endFrame's answerNextAtOnce), so that a change between such an answer and
  # its wake reaches it before the wake. With no change for 5 s it is answered as things are (the
  # client asks again). One at a time per session (`callOrder`).
  watchState @8 (after :UInt64) -> (error :Error, count :UInt64, state :FrameState);
}

# 1.18: what a FrameTiming carries besides timing and poses, as of a moment.
struct FrameState {
  visible @0 :Bool;
  focused @1 :Bool;
  stopping @2 :Bool;
  localInStage @3 :Pose;
  localSpaceChanges @4 :UInt32;
  input @5 :InputState;  # the focused session's only
}

# --- control (xr-compositorctl) -----------------------------------------------------------------

enum SessionRole {
  primary @0;     # the normal session shown and focused
  background @1;  # a normal session that is not the primary: synchronized, hidden
  overlay @2;     # always visible, over the primary
}

struct Percentiles {
  p50 @0 :Float32;
  p99 @1 :Float32;
}

struct ClientStatus {
  id @0 :UInt32;
  name @1 :Text;
  pid @2 :UInt32;
  syncMode @3 :SyncMode;
  framesSubmitted @4 :UInt64;
  swapchains @5 :UInt32;
  releases @6 :UInt64;
  gpuCopyUsP50 @7 :Float32;       # GPU time of the copies into runtime images (timestamp queries)
  gpuCopyUsP99 @8 :Float32;
  role @9 :SessionRole;
  overlayPlacement @10 :UInt32;
  # Frame accounting (docs/OPERATIONS.md): every submitted frame ends up displayed, dropped
  # (superseded before its display time came), hidden (submitted while not visible) or is still
  # queued. Late frames are displayed frames first shown after their predicted display time.
  framesDisplayed @11 :UInt64;
  framesLate @12 :UInt64;
  framesDropped @13 :UInt64;
  framesHidden @14 :UInt64;
  displayPeriods @15 :UInt32;     # the pacing: this client targets every n-th display frame
  # Windows of the most recent frames (microseconds).
  releaseUs @16 :Percentiles;     # daemon side of a release: call received -> answered
  latencyUs @17 :Percentiles;     # endFrame received -> the display frame that first shows it
  frameIntervalUs @18 :Percentiles;  # between successive endFrames
  # 1.8: image memory its swapchains hold in the daemon (shared and runtime images, as charged
  # against max_image_mib_per_client).
  imageBytes @19 :UInt64;
  # 1.8: no waitFrame or endFrame for hung_client_timeout_ms although it has shown frames; a
  # hung primary gives its role to the next normal session.
  hung @20 :Bool;
  stalledMs @21 :UInt32;          # since its last waitFrame or endFrame
  # 1.8: display frames at which its next frame was due (by its cadence) and not ready, so its
  # last complete frame was shown again.
  framesStale @22 :UInt64;
  # 1.8: releases acknowledged without their copy: the client's copies passed
  # max_copy_mib_per_period in a display period.
  releasesSkipped @23 :UInt64;
  # 1.10: display frames in which the display rotated one of its projection views to the head
  # orientation of that vsync (rendered for another one: late, reused, or another pose).
  framesReprojected @24 :UInt64;
  # 1.11, timeline mode: releases not copied because the client's rendering had not reached their
  # value after hung_client_timeout_ms (the swapchain kept its last complete content).
  releasesRenderTimedOut @25 :UInt64;
  # Queue submissions that carried its copies: one per endFrame for the releases it carries that
  # could be copied at once, one per other copy (0 from daemons that do not count them).
  copySubmissions @26 :UInt64;
  # 1.16, host mode: copies the daemon made on its own thread with VK_EXT_host_image_copy instead
  # of a submission (--host-copies), and their time there; gpuCopyUs has only the queue's copies.
  # 0 from daemons before 1.16, whose gpuCopyUs has the host copies' time too.
  hostCopies @27 :UInt64;
  hostCopyUs @28 :Percentiles;
  # 1.18: implied waits answered as their endFrame arrived (endFrame's answerNextAtOnce).
  waitsAnsweredAtOnce @29 :UInt64;
}

struct DaemonStatus {
  daemonVersion @0 :Text;
  backend @1 :Text;
  uptimeNs @2 :Int64;
  refreshHz @3 :Float32;
  displayFrames @4 :UInt64;
  clients @5 :List(ClientStatus);
  missedDisplayFrames @6 :UInt64;    # vsyncs the display loop did not compose in time
  # Wall time of the display loop per display frame: select, wait for the previous composition's
  # GPU work, record, submit.
  displayWorkUs @7 :Percentiles;
  daemonCpuUsPerDisplayFrame @8 :Percentiles;  # process CPU time (all threads) per display frame
  daemonCpuUsPerClientFrame @9 :Float32;       # the same over the last second / client frames
  primaryClientId @10 :UInt32;       # 0: none
  daemonPid @11 :UInt32;             # for tools that read the daemon's /proc entries
  # How the latest display frame was blended with the environment: the mode its bottom client
  # frame (the primary's) asked for; the display's preferred mode until a frame is shown.
  environmentBlendMode @12 :EnvironmentBlendMode;
  # 1.4: layer views the display skipped since start because an opaque projection view above
  # them filled their eye (each counted once per display frame).
  layerViewsCulled @13 :UInt64;
  # 1.4: the global priority the daemon's GPU queues got ("low", "medium", "high", "realtime";
  # "medium" without VK_KHR/EXT_global_priority; --queue-priority).
  gpuQueuePriority @14 :Text;
  # Display frames whose composition the GPU had not finished by the next vsync: the display
  # loop composed in time, but the composition waited on the GPU (for client copies that wait
  # for the clients' rendering, or a busy GPU), so the frame was shown late. Headless only (0
  # under openxr, whose runtime reports its own timing).
  displayFramesGpuLate @15 :UInt64;
  # How long after its vsync the display loop began each display frame: its timer's wake-up and
  # the thread's scheduling delay. A loop that begins a whole period late has missed that vsync
  # (missedDisplayFrames), however short its work. Headless only (zero under openxr, whose
  # runtime paces the loop).
  displayWakeDelayUs @16 :Percentiles;
  # 1.7: haptic feedback the display's controllers received, per hand [left, right].
  haptics @17 :List(HapticStatus);
  # 1.7: accept() calls on the daemon's socket that failed since start (its fds ran out); the
  # listener backs off and keeps accepting.
  acceptFailures @18 :UInt64;
  # 1.8: each limit the daemon enforced since start (refused a call or connection, closed a
  # connection, marked or evicted a hung client), by its config key.
  limitsHit @19 :List(LimitHit);
  imageBytes @20 :UInt64;         # image memory all clients' swapchains hold
  imageBytesLimit @21 :UInt64;    # max_image_mib_total, in bytes
  # 1.10: the window output (--backend window); `present` false without one.
  windowOutput @22 :WindowOutputStatus;
  # 1.12: display frames the GPU composed. Every one where the output shows them (a window) or
  # under --compose every-frame; otherwise (headless, --compose on-read) only those a readDisplay
  # asked for, each at most once. Headless only (0 under openxr).
  displayFramesComposed @23 :UInt64;
  # 1.14: timeline mode, copies held back to be submitted together (copy_batch_us; 0 when off):
  # the batches opened, and the copies that joined them, since start.
  copyBatches @24 :UInt64;
  copiesBatched @25 :UInt64;
  # 1.15: frames whose commit waited for copies held for a latch (copy_batch_before_latch_us),
  # and those of them committed after it where it was no earlier than their target's latch:
  # holding them cost a vsync.
  framesHeld @26 :UInt64;
  framesHeldPastLatch @27 :UInt64;
  # 1.17: the copy queue submissions (vkQueueSubmit calls) that carried clients' copies, since
  # start. Copies submitted together count once: an endFrame's, and a let-go's of every client.
  copyQueueSubmissions @28 :UInt64;
  # 1.19: the CPU nice value the daemon's RPC thread runs at (--nice; its other threads share it).
  # 0 from daemons before 1.19.
  rpcThreadNice @29 :Int32;
  # 1.20: how long before the display's latch held copies are let go now, in µs
  # (--copy-batch-before-latch-us, grown after held frames missed their latch up to
  # --copy-batch-before-latch-max-us). 0 while before-latch batching is off, and from daemons
  # before 1.20.
  copyBatchLeadUs @30 :UInt32;
  # 1.21: the CPU the daemon's RPC thread is kept on (--rpc-cpu, or an affinity of one CPU the
  # daemon was started with); -1 where it may run on several, and from daemons before 1.21.
  rpcThreadCpu @31 :Int32 = -1;
  # 1.22: times the daemon moved its RPC thread off a CPU that kept it waiting, left it to the
  # scheduler for want of an idle one, or kept it on a CPU again after that (rpc_cpu auto).
  # 0 from daemons before 1.22.
  rpcThreadMoves @32 :UInt32;
}

# 1.10: the desktop window the display is also presented in (seed 003's present semaphores).
struct WindowOutputStatus {
  present @0 :Bool;                  # the daemon has a window output
  open @1 :Bool;                     # false once the window was closed (the display goes on)
  width @2 :UInt32;                  # the window's swapchain extent now
  height @3 :UInt32;
  presents @4 :UInt64;
  skipped @5 :UInt64;                # display frames not presented (no image in time, minimized)
  recreations @6 :UInt64;            # swapchains made after the first (resize, out of date)
  swapchainsLive @7 :UInt32;         # the current one plus old ones awaiting proof they are unused
  presentSemaphoresLive @8 :UInt32;  # created, not yet destroyed
  maxSubmissionsInFlight @9 :UInt32; # most unfinished present submissions seen (CPU pacing: 2)
  backlogDrains @10 :UInt64;         # times too many old swapchains made the queue go idle
}

struct LimitHit {
  limit @0 :Text;                 # the config key: "max_connections", "max_message_kib", ...
  count @1 :UInt64;
  secondsAgo @2 :Float32;         # since the latest
}

struct HapticStatus {
  pulses @0 :UInt64;          # applyHaptic calls that reached the device
  stops @1 :UInt64;
  lastAmplitude @2 :Float32;
  lastDurationNs @3 :Int64;
  lastFrequency @4 :Float32;
}

struct Pixels {
  width @0 :UInt32;
  height @1 :UInt32;
  layers @2 :UInt32;
  format @3 :Int64;
  data @4 :Data;                  # tightly packed: mip-major, then layer-major
  mips @5 :UInt32;                # mip levels in data (runtime images: all; display: 1)
}

struct DisplayedLayer {
  clientId @0 :UInt32;
  frameId @1 :UInt64;
  swapchainId @2 :UInt32;
  releaseOrdinal @3 :UInt64;      # which release of that swapchain produced the pixels (0-based)
  # 1.4: false when an opaque projection view above filled this view's eye, so the compositor
  # skipped it (occlusion culling: it could not have shown a pixel).
  drawn @4 :Bool = true;
  # 1.7: a projection view's depth sub-image (XR_KHR_composition_layer_depth) arrived with it:
  # its swapchain (0: none). The headless display does not composite depth.
  depthSwapchainId @5 :UInt32;
}

interface Control {
  status @0 () -> (error :Error, status :DaemonStatus);
  # Reads back the runtime image that holds a swapchain's latest copied content.
  readSwapchain @1 (clientId :UInt32, swapchainId :UInt32)
      -> (error :Error, pixels :Pixels, releaseOrdinal :UInt64);
  # Reads back the headless display output as of the last composed display frame.
  readDisplay @2 () -> (error :Error, pixels :Pixels, shown :List(DisplayedLayer),
                        displayFrame :UInt64);
  # Makes a normal session the primary (visible + focused); the previous primary is hidden.
  # Its clients learn the change with their next waitFrame answer.
  setPrimary @3 (clientId :UInt32) -> (error :Error);
  # Closes one client's connection; its frames leave the display.
  kick @4 (clientId :UInt32) -> (error :Error);
  # Moves LOCAL to where the head is now (its position, its heading; gravity-aligned), as a
  # headset's recenter does (1.3). Backends whose runtime owns the spaces answer `unsupported`.
  recenter @5 () -> (error :Error);
  # 1.7: drive a simulated controller (backends that have them: headless). `profile` non-empty
  # gives the hand that device (empty: keeps it); `component` non-empty sets that component's
  # value (x, y). Answers `unsupported` on backends whose controllers are real.
  setInput @6 (hand :UInt8, profile :Text, component :Text, x :Float32, y :Float32) -> (error :Error);
  # 1.7: where a simulated controller is, in STAGE (aim: where it points).
  setHandPose @7 (hand :UInt8, grip :Pose, aim :Pose) -> (error :Error);
}

# --- bootstrap ----------------------------------------------------------------------------------

interface Compositor {
  # Safe to call before anything else: lets a client pick the daemon's Vulkan device.
  describe @0 () -> (error :Error, system :SystemDescription);
  connect @1 (client :ClientInfo)
      -> (error :Error, session :Session, system :SystemDescription, syncMode :SyncMode,
          clientId :UInt32);
  # Only the daemon's own uid (or root) gets a Control; others get permissionDenied.
  control @2 () -> (error :Error, control :Control);
}
