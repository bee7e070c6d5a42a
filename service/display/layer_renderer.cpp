#include "layer_renderer.hpp"

#include <algorithm>
#include <cmath>

#include "../gpu/barriers.hpp"

namespace xrc::display {

namespace {
using gpu::barrier;
using gpu::imageBarrier;

// Every access the composition makes to the display output and the sources.
constexpr VkPipelineStageFlags kComposeStages = VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
constexpr VkAccessFlags kComposeWrites = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT;
constexpr VkAccessFlags kComposeReadsWrites = kComposeWrites | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_SHADER_READ_BIT;

// Raw texel copies are exact only between formats with the same bytes in the same order.
bool rgba8(VkFormat f) { return f == VK_FORMAT_R8G8B8A8_UNORM || f == VK_FORMAT_R8G8B8A8_SRGB; }

// The shaders' blend mode of a layer: 0 opaque, 1 premultiplied source alpha, 2 unpremultiplied.
int32_t blendMode(const CommittedLayer& layer) {
  if ((layer.flags & layer_flags::blendTextureSourceAlpha) == 0) return 0;
  return (layer.flags & layer_flags::unpremultipliedAlpha) != 0 ? 2 : 1;
}

// Before a write to `rect`: a later layer overwrites (or blends over) what was drawn before it,
// so a write touching pixels written since the last barrier waits for them.
void orderWrite(VkCommandBuffer cb, OutputWrites& writes, const PixelRect& rect) {
  if (!writes.write(rect)) return;
  const VkMemoryBarrier waw{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, kComposeWrites, kComposeReadsWrites};
  vkCmdPipelineBarrier(cb, kComposeStages, kComposeStages, 0, 1, &waw, 0, nullptr, 0, nullptr);
}
}  // namespace

Result<LayerRenderer> LayerRenderer::create(VkDevice device, VkImage output, VkImageView outputView,
                                            DisplayLayout layout, SourceLookup lookup) {
  if (layout.views.empty()) return makeError(ErrorCode::invalidArgument, "a display of no views");
  auto blend = BlendPipeline::create(device, outputView);
  if (!blend) return blend.error();
  return LayerRenderer(output, std::move(layout), std::move(lookup), std::move(blend).value());
}

LayerRenderer::LayerRenderer(VkImage output, DisplayLayout layout, SourceLookup lookup, BlendPipeline blend)
    : output_(output),
      layout_(std::move(layout)),
      quadTanHalfFov_(float(std::tan(double(layout_.views.front().fov[1])))),
      lookup_(std::move(lookup)),
      blend_(std::move(blend)) {}

// A shape draw of `view` over all of eye `eye` (the rest is the caller's): source, eye rect and
// the eye's fov, with the layer's blending and color.
ShapeDraw LayerRenderer::eyeDraw(const CommittedLayer& layer, const LayerView& view, VkImageView source,
                                 uint32_t eye) const {
  ShapeDraw draw;
  draw.source = source;
  draw.arrayIndex = view.arrayIndex;
  draw.srcX = view.x;
  draw.srcY = view.y;
  draw.srcW = view.width;
  draw.srcH = view.height;
  draw.eyeX0 = int32_t(eye * layout_.viewWidth);
  draw.eyeX1 = draw.eyeX0 + int32_t(layout_.viewWidth);
  draw.eyeY1 = int32_t(layout_.viewHeight);
  for (int i = 0; i < 4; ++i) draw.tanFov[i] = std::tan(layout_.views[eye].fov[i]);
  draw.blend = blendMode(layer);
  draw.color = layer.color.value_or(LayerColor{});
  return draw;
}

void LayerRenderer::recordShape(VkCommandBuffer cb, const CommittedLayer& layer, const LayerView& view,
                                const Pose& head, size_t position, const std::vector<size_t>& coveredBelow,
                                OutputWrites& writes, Status& recordStatus) {
  const SourceImage source = lookup_(view);
  Pose layerPose;
  std::copy_n(layer.quadOrientation.begin(), 4, layerPose.orientation.begin());
  std::copy_n(layer.quadPosition.begin(), 3, layerPose.position.begin());
  const Pose stageToLayer = inverse(layerPose);
  const LayerShape& shape = layer.shape;
  for (uint32_t eye = 0; eye < layout_.views.size(); ++eye) {
    // XrEyeVisibility: 0 both, 1 left (eye 0), 2 right (eye 1).
    if ((shape.eyeVisibility == 1 && eye != 0) || (shape.eyeVisibility == 2 && eye != 1)) continue;
    if (position < coveredBelow[eye]) continue;  // an opaque projection above fills this eye
    const ViewInfo& info = layout_.views[eye];
    const Pose eyeInLayer = xrc::compose(stageToLayer, xrc::compose(head, info.eyeInHead));
    ShapeDraw draw = eyeDraw(layer, view, source.view, eye);
    std::copy_n(eyeInLayer.orientation.begin(), 4, draw.eyeToLayer);
    std::copy_n(eyeInLayer.position.begin(), 3, draw.eyeInLayer);
    // Infinitely far also when the radius is too large to square in float: the same picture.
    draw.radius = std::isfinite(shape.radius * shape.radius) ? shape.radius : 0.f;
    draw.kind = layer.kind == CommittedLayer::Kind::cylinder   ? ShapeDraw::Kind::cylinder
                : layer.kind == CommittedLayer::Kind::equirect ? ShapeDraw::Kind::equirect
                                                               : ShapeDraw::Kind::cube;
    if (draw.kind == ShapeDraw::Kind::cube) {
      draw.radius = 0;                        // a cube is infinitely far
      draw.arrayIndex = view.arrayIndex * 6;  // its +X face; the shader adds the face
    } else if (draw.kind == ShapeDraw::Kind::equirect) {
      draw.shape[0] = shape.scale[0];
      draw.shape[1] = shape.scale[1];
      draw.shape[2] = shape.bias[0];
      draw.shape[3] = shape.bias[1];
    } else {
      draw.shape[0] = shape.centralAngle;
      draw.shape[1] = shape.aspectRatio;
    }
    orderWrite(cb, writes, {draw.eyeX0, draw.eyeY0, draw.eyeX1, draw.eyeY1});
    if (auto s = blend_.record(cb, draw); !s && recordStatus) recordStatus = s;
  }
}

bool LayerRenderer::reprojects(const CommittedLayer& layer, const LayerView& view, const Pose& eyeInStage) const {
  if (!layout_.reprojection || layer.kind != CommittedLayer::Kind::projection) return false;
  if (vk::isDepthFormat(lookup_(view).format)) return false;
  // The angle of the rotation between the orientations, in double from normalized quaternions
  // (clients' may be off unit length by the 1 % the protocol allows, and acos near 1 is all
  // rounding). Below a milliradian (a sixth of a pixel of a 256-pixel, 90-degree view) a
  // rotation would change nothing.
  auto unit = [](const std::array<float, 4>& q) {
    const double n = std::sqrt(double(q[0]) * q[0] + double(q[1]) * q[1] + double(q[2]) * q[2] + double(q[3]) * q[3]);
    return std::array<double, 4>{q[0] / n, q[1] / n, q[2] / n, q[3] / n};
  };
  const auto a = unit(view.pose.orientation), b = unit(eyeInStage.orientation);
  // The relative rotation conj(a)·b: w = a·b, xyz = a.w b.xyz − b.w a.xyz − a.xyz × b.xyz.
  const double w = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
  const double x = a[3] * b[0] - b[3] * a[0] - (a[1] * b[2] - a[2] * b[1]);
  const double y = a[3] * b[1] - b[3] * a[1] - (a[2] * b[0] - a[0] * b[2]);
  const double z = a[3] * b[2] - b[3] * a[2] - (a[0] * b[1] - a[1] * b[0]);
  return 2 * std::atan2(std::sqrt(x * x + y * y + z * z), std::fabs(w)) > 1e-3;
}

void LayerRenderer::recordReprojected(VkCommandBuffer cb, const CommittedLayer& layer, const LayerView& view,
                                      const Pose& eyeInStage, OutputWrites& writes, Status& recordStatus) {
  // Rotation only: from the display eye's orientation into the view's as rendered.
  Pose eye, rendered;
  eye.orientation = eyeInStage.orientation;
  rendered.orientation = view.pose.orientation;
  const Pose eyeInRendered = xrc::compose(inverse(rendered), eye);
  ShapeDraw draw = eyeDraw(layer, view, lookup_(view).view, view.eye);
  draw.kind = ShapeDraw::Kind::projection;
  for (int i = 0; i < 4; ++i) draw.shape[i] = std::tan(view.fov[i]);
  std::copy_n(eyeInRendered.orientation.begin(), 4, draw.eyeToLayer);
  orderWrite(cb, writes, {draw.eyeX0, draw.eyeY0, draw.eyeX1, draw.eyeY1});
  if (auto s = blend_.record(cb, draw); !s && recordStatus) recordStatus = s;
}

Composition LayerRenderer::plan(const std::vector<CommittedFrame>& frames, const Pose& head) const {
  const size_t viewCount = layout_.views.size();
  Composition c;
  c.head = head;
  // Each list sized once: this runs every display frame.
  size_t layerViews = 0;
  for (const auto& frame : frames) {
    for (const auto& layer : frame.layers) layerViews += layer.views.size();
  }
  c.drawn.reserve(layerViews);
  c.shown.reserve(layerViews);
  c.reprojected.reserve(layerViews);
  c.sources.reserve(layerViews);
  c.eyes.reserve(viewCount);
  auto addSource = [&](const CommittedLayer& layer, const LayerView& view) {
    const SourceImage source = lookup_(view);
    // A cube layer reads the 6 faces of its cube.
    const bool cube = layer.kind == CommittedLayer::Kind::cube;
    VkImageSubresourceRange range{vk::aspectMask(source.format), 0, 1, view.arrayIndex * (cube ? 6 : 1),
                                  cube ? 6u : 1u};
    for (const auto& s : c.sources) {
      if (s.image == source.image && s.range.baseArrayLayer == range.baseArrayLayer) return;
    }
    c.sources.push_back({source.image, vk::attachmentLayout(source.format), range});
    c.copyValue = std::max(c.copyValue, view.copyValue);
  };
  // Occlusion culling: an opaque projection view fills its eye, so nothing drawn into that eye
  // before it can show. `coveredBelow[eye]` is the draw position of the topmost such view; views
  // before it in that eye are skipped (quads span every eye: skipped when all are covered).
  const auto isColor = [&](const LayerView& view) { return !vk::isDepthFormat(lookup_(view).format); };
  // Where each eye is at this vsync: layers drawn by ray (cylinder, equirect, cube) and
  // reprojected projection views are drawn for it.
  for (const ViewInfo& info : layout_.views) c.eyes.push_back(xrc::compose(head, info.eyeInHead));
  c.coveredBelow.assign(viewCount, 0);
  std::vector<bool> eyeFilled(viewCount, false);
  size_t position = 0;
  for (const auto& frame : frames) {
    for (const auto& layer : frame.layers) {
      const bool opaque = (layer.flags & layer_flags::blendTextureSourceAlpha) == 0;
      for (const auto& view : layer.views) {
        c.reprojected.push_back(view.eye < viewCount && reprojects(layer, view, c.eyes[view.eye]));
        // A reprojected view leaves a band of its eye uncovered (the rotation moves it).
        if (layer.kind == CommittedLayer::Kind::projection && opaque && isColor(view) && view.eye < viewCount &&
            !c.reprojected.back()) {
          c.coveredBelow[view.eye] = position;
          eyeFilled[view.eye] = true;
        }
        ++position;
      }
    }
  }
  // Every eye filled by an opaque view: clearing the output first would be overwritten anyway.
  c.clearOutput = std::find(eyeFilled.begin(), eyeFilled.end(), false) != eyeFilled.end();
  const auto drawnAt = [&](const CommittedLayer& layer, const LayerView& view, size_t at) {
    if (!isColor(view)) return false;
    if (layer.kind == CommittedLayer::Kind::projection) return view.eye < viewCount && at >= c.coveredBelow[view.eye];
    return std::any_of(c.coveredBelow.begin(), c.coveredBelow.end(), [&](size_t covered) { return at >= covered; });
  };
  for (const auto& frame : frames) {
    for (const auto& layer : frame.layers) {
      for (size_t i = 0; i < layer.views.size(); ++i) {
        const LayerView& view = layer.views[i];
        const bool draw = drawnAt(layer, view, c.drawn.size());
        c.drawn.push_back(draw);
        if (draw) addSource(layer, view);
        const bool covered =
            layer.kind == CommittedLayer::Kind::projection ? view.eye < viewCount : true;  // drawnAt checked the eyes
        if (!draw && isColor(view) && covered) c.culled++;
        if (draw && c.reprojected[c.drawn.size() - 1]) c.reprojectedClients.insert(frame.clientId);
        // Depth is not composited here; what arrived is reported.
        const uint32_t depth = i < layer.depth.size() ? layer.depth[i].view.swapchainId : 0;
        c.shown.push_back(
            {frame.clientId, frame.frameId, view.swapchainId, view.releaseOrdinal, draw || !isColor(view), depth});
      }
    }
  }
  return c;
}

void LayerRenderer::record(VkCommandBuffer cb, const std::vector<CommittedFrame>& frames, const Composition& c,
                           Status& recordStatus) {
  const uint32_t viewW = layout_.viewWidth, viewH = layout_.viewHeight;
  const uint32_t viewCount = uint32_t(layout_.views.size());
  const float tanHalfFov = quadTanHalfFov_;
  // Everything stays in GENERAL while composing: copies and the blend shader both use it.
  const VkImageSubresourceRange outRange{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  std::vector<VkImageMemoryBarrier> pre;
  pre.push_back(
      imageBarrier(output_, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL, 0, kComposeReadsWrites, outRange));
  for (const auto& s : c.sources) {
    pre.push_back(imageBarrier(s.image, s.resting, VK_IMAGE_LAYOUT_GENERAL, 0,
                               VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_SHADER_READ_BIT, s.range));
  }
  barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, kComposeStages, pre);
  OutputWrites writes;
  if (c.clearOutput) {
    orderWrite(cb, writes, {0, 0, int32_t(viewW * viewCount), int32_t(viewH)});
    VkClearColorValue black{};
    black.float32[3] = 1.f;
    vkCmdClearColorImage(cb, output_, VK_IMAGE_LAYOUT_GENERAL, &black, 1, &outRange);
  }

  size_t at = 0;
  for (const auto& frame : frames) {
    for (const auto& layer : frame.layers) {
      for (const LayerView& view : layer.views) {
        if (!c.drawn[at++]) continue;
        const SourceImage source = lookup_(view);
        // Blended layers, and opaque ones whose colors change, go through the blend shader.
        const bool blended = (layer.flags & layer_flags::blendTextureSourceAlpha) != 0;
        const bool shaded = blended || (layer.color && !layer.color->identity());
        // Target rectangle within an eye: a projection view fills its eye; a quad is placed in
        // every eye by projecting its centre and size through the display's field of view.
        struct Target {
          uint32_t eye;
          int32_t x0, y0, x1, y1;  // eye-local pixels, may extend past the eye
        };
        std::vector<Target> targets;
        if (layer.kind == CommittedLayer::Kind::cylinder || layer.kind == CommittedLayer::Kind::equirect ||
            layer.kind == CommittedLayer::Kind::cube) {
          recordShape(cb, layer, view, c.head, at - 1, c.coveredBelow, writes, recordStatus);
          continue;
        }
        if (layer.kind == CommittedLayer::Kind::projection) {
          if (view.eye >= viewCount) continue;
          if (c.reprojected[at - 1]) {
            recordReprojected(cb, layer, view, c.eyes[view.eye], writes, recordStatus);
            continue;
          }
          targets.push_back({view.eye, 0, 0, int32_t(viewW), int32_t(viewH)});
        } else {
          const float z = -layer.quadPosition[2];
          if (z <= 0.f) continue;
          const float cx = layer.quadPosition[0] / z / tanHalfFov, cy = -layer.quadPosition[1] / z / tanHalfFov;
          const float hw = layer.quadWidth / z / tanHalfFov, hh = layer.quadHeight / z / tanHalfFov;
          auto px = [&](float ndc) { return int32_t(std::lround((ndc * 0.5f + 0.5f) * float(viewW))); };
          auto py = [&](float ndc) { return int32_t(std::lround((ndc * 0.5f + 0.5f) * float(viewH))); };
          for (uint32_t eye = 0; eye < viewCount; ++eye) {
            targets.push_back({eye, px(cx - hw / 2), py(cy - hh / 2), px(cx + hw / 2), py(cy + hh / 2)});
          }
        }
        for (const Target& t : targets) {
          if (at - 1 < c.coveredBelow[t.eye]) continue;  // this eye is covered above this quad
          const int32_t w = t.x1 - t.x0, h = t.y1 - t.y0;
          if (w <= 0 || h <= 0) continue;
          // Clip against the eye, shrinking the source rectangle in proportion.
          const int32_t cx0 = std::max(t.x0, 0), cx1 = std::min(t.x1, int32_t(viewW));
          const int32_t cy0 = std::max(t.y0, 0), cy1 = std::min(t.y1, int32_t(viewH));
          if (cx0 >= cx1 || cy0 >= cy1) continue;
          auto sx = [&](int32_t x) { return view.x + int32_t(int64_t(x - t.x0) * view.width / w); };
          auto sy = [&](int32_t y) { return view.y + int32_t(int64_t(y - t.y0) * view.height / h); };
          const int32_t sx0 = sx(cx0), sx1 = sx(cx1), sy0 = sy(cy0), sy1 = sy(cy1);
          if (sx1 <= sx0 || sy1 <= sy0) continue;  // shrunk below a texel
          const int32_t eyeX = int32_t(t.eye * viewW);
          orderWrite(cb, writes, {eyeX + cx0, cy0, eyeX + cx1, cy1});
          if (shaded) {
            BlendDraw draw;
            draw.source = source.view;
            draw.arrayIndex = view.arrayIndex;
            draw.srcX = view.x;
            draw.srcY = view.y;
            draw.srcW = view.width;
            draw.srcH = view.height;
            draw.targetX = eyeX + t.x0;
            draw.targetY = t.y0;
            draw.targetW = w;
            draw.targetH = h;
            draw.clipX0 = eyeX + cx0;
            draw.clipY0 = cy0;
            draw.clipX1 = eyeX + cx1;
            draw.clipY1 = cy1;
            draw.blend = blendMode(layer);
            draw.color = layer.color.value_or(LayerColor{});
            if (auto s = blend_.record(cb, draw); !s && recordStatus) recordStatus = s;
          } else if (sx1 - sx0 == cx1 - cx0 && sy1 - sy0 == cy1 - cy0 && rgba8(source.format)) {
            VkImageCopy region{};
            region.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, view.arrayIndex, 1};
            region.srcOffset = {sx0, sy0, 0};
            region.dstSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
            region.dstOffset = {eyeX + cx0, cy0, 0};
            region.extent = {uint32_t(cx1 - cx0), uint32_t(cy1 - cy0), 1};
            vkCmdCopyImage(cb, source.image, VK_IMAGE_LAYOUT_GENERAL, output_, VK_IMAGE_LAYOUT_GENERAL, 1, &region);
          } else {
            VkImageBlit blit{};
            blit.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, view.arrayIndex, 1};
            blit.srcOffsets[0] = {sx0, sy0, 0};
            blit.srcOffsets[1] = {sx1, sy1, 1};
            blit.dstSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
            blit.dstOffsets[0] = {eyeX + cx0, cy0, 0};
            blit.dstOffsets[1] = {eyeX + cx1, cy1, 1};
            vkCmdBlitImage(cb, source.image, VK_IMAGE_LAYOUT_GENERAL, output_, VK_IMAGE_LAYOUT_GENERAL, 1, &blit,
                           VK_FILTER_NEAREST);
          }
        }
      }
    }
  }

  std::vector<VkImageMemoryBarrier> post;
  post.push_back(imageBarrier(output_, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, kComposeWrites,
                              VK_ACCESS_TRANSFER_READ_BIT, outRange));
  for (const auto& s : c.sources) {
    post.push_back(imageBarrier(s.image, VK_IMAGE_LAYOUT_GENERAL, s.resting, 0, 0, s.range));
  }
  barrier(cb, kComposeStages, VK_PIPELINE_STAGE_TRANSFER_BIT, post);
}

}  // namespace xrc::display
