import type { ReasonCode } from '../reasons.js'
import type { WeightKey, Weights } from '../tenant-config.js'
import type { Check, CheckFamily, DeviceFlags } from '../types.js'
import { fire } from './fire.js'

type Flag = keyof DeviceFlags

/** One flag rule; its family comes from the reason registry, its weight from the tenant's config. */
interface Rule {
  reason: ReasonCode
  weight: WeightKey
  message: string
  /** The flags that fire it; `ua_consistent` fires when it is false, every other flag when true. */
  flags: Flag[]
}

/** Browser-integrity signals of the client beacon. Each weighs less than the default block threshold. */
const BROWSER_RULES: Rule[] = [
  {
    reason: 'headless_browser',
    weight: 'headlessBrowser',
    flags: ['is_headless'],
    message: 'The browser is automated or headless.',
  },
  {
    reason: 'device_inconsistent',
    weight: 'deviceInconsistent',
    flags: ['ua_consistent'],
    message: "The browser's claimed operating system does not match the real device.",
  },
  {
    reason: 'emulated_environment',
    weight: 'emulatedEnvironment',
    flags: ['is_emulated', 'is_emulator'],
    message: 'The device runs in an emulator, a virtual machine or on farm-grade hardware.',
  },
  {
    reason: 'noise_injected',
    weight: 'noiseInjected',
    flags: ['is_noise_injected'],
    message: 'Canvas or WebGL readback changes within one session: fingerprint noise is being injected.',
  },
  {
    reason: 'device_tampered',
    weight: 'deviceTampered',
    flags: ['is_tampered'],
    message: 'A native browser API used for fingerprinting has been overridden.',
  },
  {
    reason: 'context_mismatch',
    weight: 'contextMismatch',
    flags: ['is_context_mismatch'],
    message: 'The browser reports a different identity in a web worker than on the page.',
  },
  {
    reason: 'engine_ua_mismatch',
    weight: 'engineUaMismatch',
    flags: ['is_engine_mismatch'],
    message: 'The JavaScript engine contradicts the browser named in the user agent.',
  },
  {
    reason: 'os_mismatch',
    weight: 'osMismatch',
    flags: ['is_os_mismatch'],
    message: 'The real operating system differs from the one the user agent claims.',
  },
]

/** Signals of the mobile SDK; our own codes (see docs/scoring.md), all well below block on their own. */
const MOBILE_RULES: Rule[] = [
  {
    reason: 'app_tampered',
    weight: 'appTampered',
    flags: ['is_hooked', 'is_cloned'],
    message: 'The app is hooked by an instrumentation framework or runs as a cloned copy.',
  },
  {
    reason: 'rooted_device',
    weight: 'rootedDevice',
    flags: ['is_rooted'],
    message: 'The device is rooted or jailbroken.',
  },
  {
    reason: 'sideloaded_app',
    weight: 'sideloadedApp',
    flags: ['is_sideloaded'],
    message: 'The app was installed from outside the official store.',
  },
  {
    reason: 'mock_location',
    weight: 'mockLocation',
    flags: ['is_mock_location'],
    message: 'The device reports a mocked location.',
  },
  {
    reason: 'debug_environment',
    weight: 'debugEnvironment',
    flags: ['is_adb_enabled', 'is_debuggable'],
    message: 'USB debugging is on or the app is debuggable.',
  },
  {
    reason: 'auto_time_off',
    weight: 'autoTimeOff',
    flags: ['is_auto_time_off'],
    message: 'Automatic time is switched off on the device.',
  },
]

const fires = (d: DeviceFlags, f: Flag) => (f === 'ua_consistent' ? d[f] === false : d[f] === true)

function apply(d: DeviceFlags, rules: Rule[], w: Weights): Check[] {
  const out: Check[] = []
  for (const r of rules) {
    const hit = r.flags.filter((f) => fires(d, f))
    if (hit.length === 0) continue
    const evidence: Check['evidence'] = {}
    for (const f of hit) evidence[f] = d[f] as boolean
    out.push(fire(r.reason, { key: r.reason, weight: w[r.weight], message: r.message, evidence }))
  }
  return out
}

/** Antidetect-browser score: fires from 50 up with medium (default 25) or high (40) confidence; low confidence never fires. */
function antidetect(d: DeviceFlags, w: Weights): Check[] {
  const score = d.antidetect_score
  const conf = d.antidetect_confidence
  if (score === undefined || score < 50 || (conf !== 'medium' && conf !== 'high')) return []
  const [high, medium] = [w.antidetectBrowserHigh, w.antidetectBrowserMed]
  return [
    fire('antidetect_browser', {
      key: 'antidetect_browser',
      weight: conf === 'high' ? high : medium,
      message: 'The browser shows the traits of an antidetect browser that fakes its fingerprint.',
      evidence: { antidetect_score: score, antidetect_confidence: conf, min_score: 50 },
    }),
  ]
}

export const deviceIntegrity: CheckFamily = (input) => {
  const d = input.device
  if (!d) return []
  const w = input.config.weights
  const out = [...apply(d, BROWSER_RULES, w), ...antidetect(d, w), ...apply(d, MOBILE_RULES, w)]
  // The client's own VPN flag only adds weight when the network checks did not already see a VPN/proxy.
  const networkSawIt = input.ip && (input.ip.isVpn || input.ip.isProxy || input.ip.isTor)
  if (d.is_vpn_active === true && !networkSawIt && !input.ip?.isPrivacyRelay) {
    out.push(
      fire('vpn_active', {
        key: 'vpn_active',
        weight: w.vpnActive,
        message: 'The device reports an active VPN that our network data did not identify.',
        evidence: { is_vpn_active: true },
      }),
    )
  }
  return out
}
