import { effectiveConfig } from '../../src/scoring/tenant-config.js'
import type { EngineInput, IpSignals } from '../../src/scoring/types.js'

export const residential: IpSignals = {
  asn: 7922,
  org: 'Comcast Cable Communications, LLC',
  geoCountry: 'US',
  isDatacenter: false,
  datacenterProvider: null,
  isTor: false,
  isVpn: false,
  vpnProvider: null,
  isProxy: false,
  isPrivacyRelay: false,
}

export function input(over: Partial<EngineInput> = {}): EngineInput {
  return {
    config: effectiveConfig({ weights: {}, thresholds: {} }),
    lists: [],
    eventCountry: null,
    ipCountry: null,
    ip: null,
    email: null,
    device: null,
    timezone: null,
    history: { ipAccounts: null },
    ...over,
  }
}
