// What blend.comp and shape.comp do with the texel a layer puts at an output pixel. First the
// layer's color scale and bias (XR_KHR_composition_layer_color_scale_bias): texel * scale + bias,
// with `color` holding scale.rg, scale.ba, bias.rg, bias.ba as half floats. Then the OpenXR layer
// flags (`blend`): 0, opaque: the texel is stored; 1, BLEND_TEXTURE_SOURCE_ALPHA: out = src +
// dst * (1 - src.a), the source premultiplied; 2, with UNPREMULTIPLIED_ALPHA too: the source
// color is multiplied by its alpha first. The including shader declares the `display` image.
void writeLayerTexel(ivec2 out_px, vec4 s, uvec4 color, int blend) {
  s = s * vec4(unpackHalf2x16(color.x), unpackHalf2x16(color.y)) +
      vec4(unpackHalf2x16(color.z), unpackHalf2x16(color.w));
  if (blend == 0) {
    imageStore(display, out_px, clamp(s, 0.0, 1.0));
    return;
  }
  if (blend == 2) s.rgb *= s.a;
  const vec4 d = imageLoad(display, out_px);
  imageStore(display, out_px, clamp(s + d * (1.0 - s.a), 0.0, 1.0));
}
