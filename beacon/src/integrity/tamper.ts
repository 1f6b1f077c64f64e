/**
 * Overridden natives: a fingerprinting API whose source is not `[native code]` under its own name. A plain
 * replacement prints its JS source; a Proxy or bound wrapper prints native code without the name.
 */

const NATIVE = /^function ([\w$ ]*)\(\) \{\s*\[native code\]\s*\}$/

/** [prototype name, property, accessor]: the prototype is looked up on window so a missing API is skipped. */
const TARGETS: [string, string, boolean][] = [
  ['HTMLCanvasElement', 'toDataURL', false],
  ['HTMLCanvasElement', 'toBlob', false],
  ['HTMLCanvasElement', 'getContext', false],
  ['CanvasRenderingContext2D', 'getImageData', false],
  ['CanvasRenderingContext2D', 'measureText', false],
  ['CanvasRenderingContext2D', 'fillText', false],
  ['WebGLRenderingContext', 'getParameter', false],
  ['WebGLRenderingContext', 'getExtension', false],
  ['WebGLRenderingContext', 'readPixels', false],
  ['WebGL2RenderingContext', 'getParameter', false],
  ['AudioBuffer', 'getChannelData', false],
  ['AnalyserNode', 'getFloatFrequencyData', false],
  ['OfflineAudioContext', 'startRendering', false],
  ['Date', 'getTimezoneOffset', false],
  ['Navigator', 'userAgent', true],
  ['Navigator', 'platform', true],
  ['Navigator', 'hardwareConcurrency', true],
  ['Navigator', 'languages', true],
  ['Navigator', 'webdriver', true],
  ['Navigator', 'plugins', true],
  ['Navigator', 'deviceMemory', true],
  ['Navigator', 'maxTouchPoints', true],
  ['Screen', 'width', true],
  ['Screen', 'height', true],
  ['Screen', 'colorDepth', true],
]

function native(fn: unknown, name: string, source: (this: unknown) => string): boolean {
  if (typeof fn !== 'function') return false
  const m = NATIVE.exec(source.call(fn))
  return m !== null && (m[1] === name || m[1] === `get ${name}`)
}

export function isTampered(w: Window): boolean {
  const source = Function.prototype.toString
  // A patched toString could make every other function look native.
  if (!native(source, 'toString', source)) return true
  const g = w as unknown as Record<string, { prototype?: object } | undefined>
  for (const [owner, key, accessor] of TARGETS) {
    const proto = owner === 'Date' ? Date.prototype : g[owner]?.prototype
    if (!proto) continue
    const d = Object.getOwnPropertyDescriptor(proto, key)
    if (!d) continue
    if (!native(accessor ? d.get : d.value, key, source)) return true
  }
  const intl = Object.getOwnPropertyDescriptor(Intl.DateTimeFormat.prototype, 'resolvedOptions')
  if (intl && !native(intl.value, 'resolvedOptions', source)) return true
  // Stealth scripts define properties on the navigator or screen object itself, which shadow the prototype.
  return Object.getOwnPropertyNames(w.navigator).length > 0 || Object.getOwnPropertyNames(w.screen).length > 0
}
