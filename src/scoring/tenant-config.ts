import type { CompiledRule } from './rules/types.js'

/** Default weights and thresholds, and how a tenant's overrides combine with them. */
export const DEFAULT_WEIGHTS = {
  datacenterIp: 45,
  proxyVpn: 30,
  deviceReuseLow: 15,
  deviceReuseMed: 30,
  deviceReuseHigh: 45,
  ipVelocityMed: 25,
  ipVelocityHigh: 40,
  emailDisposable: 35,
  emailNoMx: 25,
  emailGibberish: 20,
  emailPlusTag: 10,
  geoMismatch: 20,
  deviceVelocity: 25,
  // Our own signals (docs/scoring.md): accounts on one canonical mailbox, and account takeover.
  mailboxReuseMed: 25,
  mailboxReuseHigh: 45,
  accountTakeover: 35,
  // Every other built-in weight (issue 28): the defaults are the spec's and docs/scoring.md's.
  privacyRelay: 0,
  emailRelay: 0,
  headlessBrowser: 45,
  deviceInconsistent: 25,
  emulatedEnvironment: 40,
  noiseInjected: 45,
  deviceTampered: 45,
  contextMismatch: 45,
  engineUaMismatch: 40,
  osMismatch: 45,
  antidetectBrowserHigh: 40,
  antidetectBrowserMed: 25,
  timezoneMismatch: 35,
  knownSpoofSignature: 35,
  forgedBeacon: 45,
  appTampered: 40,
  rootedDevice: 20,
  sideloadedApp: 15,
  mockLocation: 30,
  debugEnvironment: 10,
  autoTimeOff: 5,
  vpnActive: 15,
  vpnDrop: 40,
  ipCloaking: 30,
  deviceIpHopping: 25,
  abuseIp: 40,
  abusiveAsn: 35,
  fraudNetworkOne: 20,
  fraudNetworkTwo: 30,
  fraudNetworkMore: 40,
  // A wave of sign-ups with machine-generated mailboxes on the tenant (docs/scoring.md, issue 27).
  gibberishWave: 25,
} as const

export const DEFAULT_THRESHOLDS = {
  review: 40,
  block: 70,
  deviceReuseMed: 4,
  deviceReuseHigh: 10,
  ipVelocityMed: 5,
  ipVelocityHigh: 10,
  deviceVelocity: 20,
  mailboxReuseHigh: 4,
  gibberishWave: 3,
} as const

export type WeightKey = keyof typeof DEFAULT_WEIGHTS
export type ThresholdKey = keyof typeof DEFAULT_THRESHOLDS
export type Weights = Record<WeightKey, number>
export type Thresholds = Record<ThresholdKey, number>

export interface ScoringConfig {
  weights: Weights
  thresholds: Thresholds
  /** The tenant's own rules, compiled (the services compile them once per config version). */
  rules?: readonly CompiledRule[]
}

export interface ConfigOverrides {
  weights: Partial<Weights>
  thresholds: Partial<Thresholds>
}

export const WEIGHT_KEYS = Object.keys(DEFAULT_WEIGHTS) as WeightKey[]
export const THRESHOLD_KEYS = Object.keys(DEFAULT_THRESHOLDS) as ThresholdKey[]

export function effectiveConfig(o: ConfigOverrides): ScoringConfig {
  return {
    weights: { ...DEFAULT_WEIGHTS, ...o.weights },
    thresholds: { ...DEFAULT_THRESHOLDS, ...o.thresholds },
  }
}

/** Pairs that must stay ordered for the verdict and the tiers to make sense: [lower, upper]. */
const ORDERED: readonly [ThresholdKey, ThresholdKey][] = [
  ['review', 'block'],
  ['deviceReuseMed', 'deviceReuseHigh'],
  ['ipVelocityMed', 'ipVelocityHigh'],
]

/** Returns a message for the first ordering the config breaks, or null when it is consistent. */
export function configProblem(c: ScoringConfig): string | null {
  for (const [lo, hi] of ORDERED) {
    if (c.thresholds[lo] > c.thresholds[hi]) {
      return `thresholds.${lo} (${c.thresholds[lo]}) must not exceed thresholds.${hi} (${c.thresholds[hi]})`
    }
  }
  return null
}
