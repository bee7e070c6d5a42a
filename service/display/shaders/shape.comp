#version 450
#extension GL_GOOGLE_include_directive : require
// Draws a cylinder, equirect or cube layer (XR_KHR_composition_layer_cylinder / _equirect /
// _cube), or a projection view rendered at another head orientation, into one eye of the
// display output: each output pixel's view ray is turned into the
// layer's space, intersected with the layer's cylinder (axis +y) or sphere, and the point hit
// picks the texel (nearest); a cube map is sampled by the ray's direction, face by face as
// Vulkan selects them. A radius of 0 means infinitely far: only the ray's direction counts.
// Pixels whose ray misses the image are left alone. Color scale and bias, and blending, as
// blend.comp.
layout(local_size_x = 8, local_size_y = 8) in;

layout(set = 0, binding = 0) uniform sampler2DArray source;
layout(set = 0, binding = 1, rgba8) uniform image2D display;

layout(push_constant) uniform Params {
  ivec4 clip;        // the eye's rectangle in output pixels: x0 y0 x1 y1 (exclusive)
  vec4 tanFov;       // tangents of the eye's fov angles: left right up down
  vec4 eyeToLayer;   // quaternion (x y z w): eye-space directions into layer space
  vec4 eyeInLayer;   // xyz: the eye in layer space; w: radius (0: infinitely far)
  vec4 shape;        // cylinder: centralAngle aspectRatio; equirect: scale.x scale.y bias.x bias.y;
                     // projection view: tangents of its fov as rendered, left right up down
  ivec4 source;      // the sub-image: x y width height
  int kind;          // 0: cylinder, 1: equirect, 2: cube (arrayIndex: the cube's +X face), 3: projection view
  int arrayIndex;
  int blend;         // 0: opaque, 1: source alpha (premultiplied), 2: source alpha, unpremultiplied
  int unused;
  uvec4 color;       // color scale and bias as in blend.comp
} p;

#include "layer_texel.glsl"

const float kPi = 3.14159265;

vec3 rotate(vec4 q, vec3 v) {
  const vec3 t = 2.0 * cross(q.xyz, v);
  return v + q.w * t + cross(q.xyz, t);
}

void main() {
  const ivec2 out_px = p.clip.xy + ivec2(gl_GlobalInvocationID.xy);
  if (out_px.x >= p.clip.z || out_px.y >= p.clip.w) return;
  const vec2 f = (vec2(out_px - p.clip.xy) + 0.5) / vec2(p.clip.zw - p.clip.xy);
  const vec3 d = normalize(rotate(p.eyeToLayer, vec3(mix(p.tanFov.x, p.tanFov.y, f.x), mix(p.tanFov.z, p.tanFov.w, f.y), -1.0)));
  const vec3 o = p.eyeInLayer.xyz;
  float r = p.eyeInLayer.w;
  vec2 uv;
  int layer = p.arrayIndex;
  if (p.kind == 2) {
    // Vulkan's cube face selection (major axis, then sc/tc per face).
    const vec3 a = abs(d);
    float sc, tc, ma;
    if (a.x >= a.y && a.x >= a.z) {
      layer += d.x > 0.0 ? 0 : 1;
      sc = d.x > 0.0 ? -d.z : d.z;
      tc = -d.y;
      ma = a.x;
    } else if (a.y >= a.z) {
      layer += d.y > 0.0 ? 2 : 3;
      sc = d.x;
      tc = d.y > 0.0 ? d.z : -d.z;
      ma = a.y;
    } else {
      layer += d.z > 0.0 ? 4 : 5;
      sc = d.z > 0.0 ? d.x : -d.x;
      tc = -d.y;
      ma = a.z;
    }
    uv = 0.5 * (vec2(sc, tc) / ma + 1.0);
  } else if (p.kind == 0) {
    vec3 hit;
    if (r <= 0.0) {
      const float h = length(d.xz);
      if (h < 1e-6) return;
      hit = d / h;  // on the unit cylinder; heights scale with the radius, so any radius would do
      r = 1.0;
    } else {
      // |o.xz + t d.xz| = r, the far root: the viewer is normally inside the cylinder.
      const float a = dot(d.xz, d.xz);
      if (a < 1e-12) return;
      const float b = dot(o.xz, d.xz), c = dot(o.xz, o.xz) - r * r;
      const float disc = b * b - a * c;
      if (disc < 0.0) return;
      const float t = (-b + sqrt(disc)) / a;
      if (t <= 0.0) return;
      hit = o + t * d;
    }
    const float height = r * p.shape.x / p.shape.y;
    uv = vec2(atan(hit.x, -hit.z) / p.shape.x + 0.5, 0.5 - hit.y / height);
  } else if (p.kind == 3) {
    // A projection view shown at another head orientation than it was rendered for (rotational
    // reprojection): eyeToLayer turns the display eye's ray into the view as rendered, whose fov
    // tangents (left right up down) are in shape.
    if (d.z > -1e-6) return;
    const vec2 t = d.xy / -d.z;
    uv = vec2((t.x - p.shape.x) / (p.shape.y - p.shape.x), (p.shape.z - t.y) / (p.shape.z - p.shape.w));
  } else {
    vec3 dir = d;
    if (r > 0.0) {
      const float b = dot(o, d), c = dot(o, o) - r * r;
      const float disc = b * b - c;
      if (disc < 0.0) return;
      const float t = -b + sqrt(disc);
      if (t <= 0.0) return;
      dir = normalize(o + t * d);
    }
    const float lon = atan(dir.x, -dir.z), polar = acos(clamp(dir.y, -1.0, 1.0));
    uv = vec2(p.shape.x * (lon / (2.0 * kPi) + 0.5) + p.shape.z, p.shape.y * polar / kPi + p.shape.w);
  }
  // Written so that NaN (degenerate geometry from extreme but finite parameters) fails it too.
  if (!(all(greaterThanEqual(uv, vec2(0.0))) && all(lessThanEqual(uv, vec2(1.0))))) return;
  const ivec2 src_px = p.source.xy + min(ivec2(uv * vec2(p.source.zw)), p.source.zw - 1);
  writeLayerTexel(out_px, texelFetch(source, ivec3(src_px, layer), 0), p.color, p.blend);
}
