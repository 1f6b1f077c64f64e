import { countPresent, OS_FONTS } from '../probes/fonts.js'
import {
  claimedEngine,
  claimedOs,
  claimsMobile,
  claimsTouchDevice,
  compatible,
  type Engine,
  type Os,
  platformOs,
  uaDataOs,
} from '../probes/ua.js'
import type { GlInfo } from '../probes/webgl.js'
import type { Identity } from '../probes/worker.js'
import type { LooseNavigator } from '../util.js'

/** The declared surfaces agree: UA vs navigator.platform, appVersion/oscpu, touch and mobile hints. */
export function uaConsistent(n: LooseNavigator): boolean {
  const ua = n.userAgent
  const os = claimedOs(ua)
  const plat = platformOs(n.platform || '')
  if (os && plat && !compatible(os, plat)) return false
  const engine = claimedEngine(ua)
  // Chromium and WebKit derive appVersion from the UA; an override of one forgets the other.
  if (
    engine !== 'spidermonkey' &&
    n.appVersion &&
    ua.startsWith('Mozilla/') &&
    n.appVersion !== ua.slice(8)
  ) {
    return false
  }
  if (engine === 'spidermonkey' && n.oscpu && os) {
    const cpuOs = claimedOs(n.oscpu)
    if (cpuOs && !compatible(os, cpuOs)) return false
  }
  if (claimsTouchDevice(ua) && n.maxTouchPoints === 0) return false
  const mobile = n.userAgentData?.mobile
  if (typeof mobile === 'boolean' && mobile !== claimsMobile(ua)) return false
  return true
}

/** The engine actually running this code, from its error messages (not localised) and stack format. */
export function realEngine(): Engine | null {
  let message = ''
  try {
    const o = JSON.parse('null')
    message = typeof o.x
  } catch (e) {
    message = String((e as Error).message)
  }
  if (/^Cannot read propert/.test(message)) return 'v8'
  if (/is null|has no properties/.test(message)) return 'spidermonkey'
  if (/is not an object/.test(message)) return 'jsc'
  return /^Error: probe\n\s+at /.test(String(new Error('probe').stack)) ? 'v8' : null
}

export function engineMismatch(ua: string): boolean {
  const claimed = claimedEngine(ua)
  const real = realEngine()
  return claimed !== null && real !== null && claimed !== real
}

/** GPU strings only one OS family produces: Direct3D is Windows, Metal and Apple silicon are Apple. */
function gpuOs(gl: GlInfo | null): Os[] {
  const r = gl ? `${gl.vendor} ${gl.renderer}` : ''
  if (/Direct3D|D3D(9|11|12)/i.test(r)) return ['windows']
  if (/Metal Renderer|Apple (M\d|GPU)/.test(r)) return ['mac', 'ios']
  return []
}

/** The OS the fonts reveal: none of the claimed OS's own fonts and at least two of another's. */
function fontsContradict(claimed: Os, found: Set<string>): boolean {
  const win = countPresent(found, OS_FONTS.windows)
  const apple = countPresent(found, OS_FONTS.apple)
  const linux = countPresent(found, OS_FONTS.linux)
  switch (claimed) {
    case 'windows':
      return win === 0 && (apple >= 2 || linux >= 2)
    case 'mac':
      return apple === 0 && (win >= 2 || linux >= 2)
    case 'linux':
    case 'chromeos':
      return linux === 0 && (win >= 2 || apple >= 2)
    case 'android':
      return win >= 2 || apple >= 2
    case 'ios':
      return win >= 2 || linux >= 2
  }
}

/** OS-truth signals (userAgentData platform, GPU API, OS-only fonts) against the OS the UA claims. */
export function osMismatch(n: LooseNavigator, gl: GlInfo | null, fonts: Set<string>): boolean {
  const claimed = claimedOs(n.userAgent)
  if (!claimed) return false
  const hinted = uaDataOs(n.userAgentData?.platform)
  if (hinted && !compatible(claimed, hinted)) return true
  const gpu = gpuOs(gl)
  if (gpu.length > 0 && !gpu.some((os) => compatible(claimed, os))) return true
  return fontsContradict(claimed, fonts)
}

/** The page and a Web Worker must see the same browser; antidetect patches often reach only the page. */
export function contextMismatch(page: Identity, worker: Identity | null): boolean {
  if (!worker) return false
  const differs = (a: string | number, b: string | number) =>
    a !== '' && b !== '' && a !== 0 && b !== 0 && a !== b
  return (
    differs(page.ua, worker.ua) ||
    differs(page.platform, worker.platform) ||
    differs(page.cores, worker.cores) ||
    differs(page.languages, worker.languages) ||
    differs(page.timezone, worker.timezone) ||
    differs(page.renderer, worker.renderer)
  )
}
