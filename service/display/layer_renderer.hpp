// The layer renderer every display output shares: given the client frames a vsync shows, it
// decides what is drawn (occlusion culling, rotational reprojection of projection views shown
// at another head orientation) and records the composition into one side-by-side output image:
// opaque projections and quads by copies and blits, blended or colour-adjusted layers and the
// cylinder, equirect and cube layers by compute shaders (BlendPipeline). It owns no runtime
// image: the output tells it, per layer view, which image to read (SourceLookup). Display thread
// only.
#pragma once

#include <vulkan/vulkan.h>

#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "../backends/backend.hpp"
#include "blend_pipeline.hpp"
#include "output_writes.hpp"
#include "xrc/pose.hpp"
#include "xrc/result.hpp"

namespace xrc::display {

// A runtime image as the renderer reads it.
struct SourceImage {
  VkImage image = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;  // color formats: mip 0, every layer, read as stored (for shaders)
  VkFormat format = VK_FORMAT_UNDEFINED;
};
using SourceLookup = std::function<SourceImage(const LayerView&)>;

// The display composed for: `views` side by side in an RGBA8 output of
// (viewWidth * views.size()) x viewHeight. Quads are placed through the first view's field of
// view, taken as symmetric.
struct DisplayLayout {
  std::vector<ViewInfo> views;  // at least one
  uint32_t viewWidth = 0, viewHeight = 0;
  // A projection view shown at another head orientation than it was rendered for is rotated to
  // the display's (rotational reprojection); off: drawn as rendered.
  bool reprojection = true;
};

// One display frame's composition, decided before it is recorded.
struct Composition {
  struct Source {
    VkImage image;
    VkImageLayout resting;
    VkImageSubresourceRange range;
  };
  std::vector<bool> drawn;        // per layer view (frame, layer, view order): read by the composition
  std::vector<ShownLayer> shown;  // per layer view, for status
  uint64_t copyValue = 0;         // copy timeline value every image read needs
  uint64_t culled = 0;            // color views skipped under an opaque projection
  std::set<uint32_t> reprojectedClients;
  // For the recording.
  std::vector<Source> sources;  // every runtime image subresource read, transitioned once each way
  std::vector<Pose> eyes;       // where each eye is at the vsync
  Pose head;
  std::vector<size_t> coveredBelow;  // per eye: draw position of its topmost opaque projection view
  std::vector<bool> reprojected;     // per draw position
  bool clearOutput = true;           // some eye is not filled by an opaque projection view
};

class LayerRenderer {
 public:
  // `output` (with a storage view `outputView`) must be RGBA8, of the layout's size.
  static Result<LayerRenderer> create(VkDevice device, VkImage output, VkImageView outputView, DisplayLayout layout,
                                      SourceLookup lookup);

  const DisplayLayout& layout() const { return layout_; }
  Composition plan(const std::vector<CommittedFrame>& frames, const Pose& head) const;
  // Starts a display frame: the previous frame's recording must have completed on the GPU.
  Status beginFrame() { return blend_.beginFrame(); }
  // Records `composition` of `frames`: the output ends in TRANSFER_SRC_OPTIMAL, every source in
  // its resting layout. A draw that cannot be recorded is skipped and its error kept in
  // `recordStatus` (the first one).
  void record(VkCommandBuffer cb, const std::vector<CommittedFrame>& frames, const Composition& composition,
              Status& recordStatus);

 private:
  LayerRenderer(VkImage output, DisplayLayout layout, SourceLookup lookup, BlendPipeline blend);
  bool reprojects(const CommittedLayer& layer, const LayerView& view, const Pose& eyeInStage) const;
  // A cylinder, equirect or cube layer's view, drawn by ray into each eye it is visible in.
  void recordShape(VkCommandBuffer cb, const CommittedLayer& layer, const LayerView& view, const Pose& head,
                   size_t position, const std::vector<size_t>& coveredBelow, OutputWrites& writes,
                   Status& recordStatus);
  void recordReprojected(VkCommandBuffer cb, const CommittedLayer& layer, const LayerView& view, const Pose& eyeInStage,
                         OutputWrites& writes, Status& recordStatus);
  ShapeDraw eyeDraw(const CommittedLayer& layer, const LayerView& view, VkImageView source, uint32_t eye) const;

  VkImage output_;
  DisplayLayout layout_;
  float quadTanHalfFov_;  // tan of the first view's right half-angle (the field of view taken as symmetric)
  SourceLookup lookup_;
  BlendPipeline blend_;
};

}  // namespace xrc::display
