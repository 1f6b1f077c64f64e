import { claimedEngine, claimsMobile } from '../probes/ua.js'
import type { GlInfo } from '../probes/webgl.js'
import type { LooseNavigator } from '../util.js'

/**
 * Headless or automated: one strong marker (webdriver, a headless brand) or two weak ones (features a real
 * desktop Chrome always has but old headless builds lack).
 */
export function isHeadless(n: LooseNavigator, w: Window): boolean {
  const ua = n.userAgent
  const brands = n.userAgentData?.brands || []
  if (n.webdriver === true) return true
  if (/HeadlessChrome/.test(ua) || brands.some((b) => /Headless/i.test(b.brand))) return true
  const chromeDesktop = claimedEngine(ua) === 'v8' && !claimsMobile(ua) && !/Android/.test(ua)
  let weak = 0
  if (!n.languages || n.languages.length === 0) weak++
  if (chromeDesktop && n.plugins && n.plugins.length === 0) weak++
  if (chromeDesktop && !(w as unknown as { chrome?: unknown }).chrome) weak++
  if (w.outerWidth === 0 && w.outerHeight === 0) weak++
  return weak >= 2
}

/** Renderers of software rasterisers and virtual machines' virtual GPUs. */
const SOFTWARE_GPU =
  /SwiftShader|llvmpipe|softpipe|lavapipe|VirtualBox|VMware|SVGA3D|Parallels|Microsoft Basic Render|Hyper-V|QEMU|virgl|Red Hat|Mesa OffScreen|Apple Software Renderer/i

export function isEmulated(gl: GlInfo | null): boolean {
  return gl !== null && SOFTWARE_GPU.test(`${gl.vendor} ${gl.renderer}`)
}
