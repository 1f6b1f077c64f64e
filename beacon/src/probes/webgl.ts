/** WebGL: vendor and renderer (the GPU, used by the emulation and OS checks) and a parameter summary. */

export interface GlInfo {
  vendor: string
  renderer: string
  /** Version strings, limits, precisions and extensions: part of the fingerprint. */
  summary: string
}

export function probeWebgl(): GlInfo | null {
  const canvas = document.createElement('canvas')
  const gl = (canvas.getContext('webgl') ||
    canvas.getContext('experimental-webgl')) as WebGLRenderingContext | null
  if (!gl) return null
  const dbg = gl.getExtension('WEBGL_debug_renderer_info')
  const vendor = String(gl.getParameter(dbg ? dbg.UNMASKED_VENDOR_WEBGL : gl.VENDOR))
  const renderer = String(gl.getParameter(dbg ? dbg.UNMASKED_RENDERER_WEBGL : gl.RENDERER))
  const params = [
    gl.VERSION,
    gl.SHADING_LANGUAGE_VERSION,
    gl.VENDOR,
    gl.RENDERER,
    gl.MAX_TEXTURE_SIZE,
    gl.MAX_CUBE_MAP_TEXTURE_SIZE,
    gl.MAX_RENDERBUFFER_SIZE,
    gl.MAX_VIEWPORT_DIMS,
    gl.MAX_VERTEX_ATTRIBS,
    gl.MAX_VERTEX_UNIFORM_VECTORS,
    gl.MAX_FRAGMENT_UNIFORM_VECTORS,
    gl.MAX_VARYING_VECTORS,
    gl.MAX_COMBINED_TEXTURE_IMAGE_UNITS,
    gl.MAX_TEXTURE_IMAGE_UNITS,
    gl.MAX_VERTEX_TEXTURE_IMAGE_UNITS,
    gl.ALIASED_LINE_WIDTH_RANGE,
    gl.ALIASED_POINT_SIZE_RANGE,
    gl.RED_BITS,
    gl.GREEN_BITS,
    gl.BLUE_BITS,
    gl.ALPHA_BITS,
    gl.DEPTH_BITS,
    gl.STENCIL_BITS,
  ].map((p) => String(gl.getParameter(p)))
  for (const shader of [gl.VERTEX_SHADER, gl.FRAGMENT_SHADER]) {
    for (const precision of [gl.HIGH_FLOAT, gl.MEDIUM_FLOAT, gl.HIGH_INT]) {
      const f = gl.getShaderPrecisionFormat(shader, precision)
      params.push(f ? `${f.rangeMin}/${f.rangeMax}/${f.precision}` : '-')
    }
  }
  params.push((gl.getSupportedExtensions() || []).slice().sort().join(','))
  // Contexts are a scarce resource (browsers cap them): give ours back, after the collection (losing
  // one waits for the GPU process, 1-12 ms on a cold start).
  const lose = gl.getExtension('WEBGL_lose_context')
  if (lose) setTimeout(() => lose.loseContext(), 200)
  return { vendor, renderer, summary: params.join('|') }
}
