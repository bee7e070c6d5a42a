#version 450
#extension GL_GOOGLE_include_directive : require
// Draws one layer's sub-image into the display output, nearest texel, as layer_texel.glsl says
// (color scale and bias, then the layer flags). Opaque layers reach this shader only when they
// carry a color scale and bias; otherwise they are copied.
// Values are blended as stored (an sRGB source is read through a UNORM view), the same bytes a
// plain copy would move, so opaque and blended layers agree.
layout(local_size_x = 8, local_size_y = 8) in;

layout(set = 0, binding = 0) uniform sampler2DArray source;
layout(set = 0, binding = 1, rgba8) uniform image2D display;

layout(push_constant) uniform Params {
  ivec4 clip;      // output pixels written: x0 y0 x1 y1 (x1, y1 exclusive)
  ivec4 target;    // the layer's whole target rectangle in output pixels: x0 y0 width height
  ivec4 source;    // the sub-image: x y width height
  int arrayIndex;
  int blend;       // 0: opaque, 1: source alpha (premultiplied), 2: source alpha, unpremultiplied
  int unused0, unused1;
  uvec4 color;     // half floats: scale.rg scale.ba bias.rg bias.ba
} p;

#include "layer_texel.glsl"

void main() {
  const ivec2 out_px = p.clip.xy + ivec2(gl_GlobalInvocationID.xy);
  if (out_px.x >= p.clip.z || out_px.y >= p.clip.w) return;
  // Nearest texel: the same integer mapping the opaque path's copies use.
  const ivec2 src_px = p.source.xy + ((out_px - p.target.xy) * p.source.zw) / p.target.zw;
  writeLayerTexel(out_px, texelFetch(source, ivec3(src_px, p.arrayIndex), 0), p.color, p.blend);
}
