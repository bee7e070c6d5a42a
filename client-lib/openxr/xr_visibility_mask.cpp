// XR_KHR_visibility_mask. Where the daemon's display has masks of its own (a runtime under the
// openxr backend), they are the answer. Otherwise the daemon describes each view by a rectangular
// field of view and shows all of it: the visible mesh is the view's rectangle (two triangles), the
// line loop its outline, and the hidden mesh one triangle of zero area (nothing is hidden; an
// empty mesh would tell apps the runtime has no masks at all). Vertices lie on the z = -1 plane of the view, at
// the tangents of its fov angles, as the extension specifies; triangles and the loop run
// counter-clockwise.
#include <array>
#include <cmath>

#include "entry_points.hpp"

namespace xrc::openxr {

namespace {

struct Mask {
  std::vector<XrVector2f> vertices;
  std::vector<uint32_t> indices;
};

Mask maskOf(const client::ViewDescription& view, XrVisibilityMaskTypeKHR type) {
  for (const VisibilityMask& m : view.visibilityMasks) {
    if (m.type != uint32_t(type)) continue;
    Mask out;
    for (size_t i = 0; i + 1 < m.vertices.size(); i += 2) out.vertices.push_back({m.vertices[i], m.vertices[i + 1]});
    out.indices = m.indices;
    return out;
  }
  const auto& fov = view.fov;
  const float left = std::tan(fov[0]), right = std::tan(fov[1]), up = std::tan(fov[2]), down = std::tan(fov[3]);
  // Counter-clockwise, seen from the eye: bottom-left, bottom-right, top-right, top-left.
  const std::vector<XrVector2f> corners{{left, down}, {right, down}, {right, up}, {left, up}};
  switch (type) {
    case XR_VISIBILITY_MASK_TYPE_VISIBLE_TRIANGLE_MESH_KHR:
      return {corners, {0, 1, 2, 0, 2, 3}};
    case XR_VISIBILITY_MASK_TYPE_LINE_LOOP_KHR:
      return {corners, {0, 1, 2, 3}};
    default:  // XR_VISIBILITY_MASK_TYPE_HIDDEN_TRIANGLE_MESH_KHR: hides nothing
      return {{corners[0], corners[0], corners[0]}, {0, 1, 2}};
  }
}

}  // namespace

XrResult XRAPI_CALL GetVisibilityMaskKHR(XrSession handle, XrViewConfigurationType viewConfigurationType,
                                         uint32_t viewIndex, XrVisibilityMaskTypeKHR type, XrVisibilityMaskKHR* mask) {
  auto session = lookup<Session>(handle);
  if (!session) return XR_ERROR_HANDLE_INVALID;
  if (!hasType(mask, XR_TYPE_VISIBILITY_MASK_KHR)) return XR_ERROR_VALIDATION_FAILURE;
  if (type != XR_VISIBILITY_MASK_TYPE_HIDDEN_TRIANGLE_MESH_KHR &&
      type != XR_VISIBILITY_MASK_TYPE_VISIBLE_TRIANGLE_MESH_KHR && type != XR_VISIBILITY_MASK_TYPE_LINE_LOOP_KHR) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  if (viewConfigurationType != systemViewConfiguration(*session->instance)) {
    return XR_ERROR_VIEW_CONFIGURATION_TYPE_UNSUPPORTED;
  }
  const auto& views = session->instance->system.views;
  if (viewIndex >= views.size()) return XR_ERROR_VALIDATION_FAILURE;
  {
    Lock lock(session->mutex);
    if (session->lifecycle.lost()) return XR_ERROR_SESSION_LOST;
  }
  const Mask m = maskOf(views[viewIndex], type);
  mask->vertexCountOutput = uint32_t(m.vertices.size());
  mask->indexCountOutput = uint32_t(m.indices.size());
  // A capacity of 0 for either array asks for the counts only (the CTS's reading of the idiom).
  if (mask->vertexCapacityInput == 0 || mask->indexCapacityInput == 0) return XR_SUCCESS;
  if (mask->vertexCapacityInput < m.vertices.size() || mask->indexCapacityInput < m.indices.size()) {
    return XR_ERROR_SIZE_INSUFFICIENT;
  }
  if ((!m.vertices.empty() && mask->vertices == nullptr) || (!m.indices.empty() && mask->indices == nullptr)) {
    return XR_ERROR_VALIDATION_FAILURE;
  }
  std::copy(m.vertices.begin(), m.vertices.end(), mask->vertices);
  std::copy(m.indices.begin(), m.indices.end(), mask->indices);
  return XR_SUCCESS;
}

}  // namespace xrc::openxr
