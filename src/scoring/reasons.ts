import type { WeightKey } from './tenant-config.js'

/**
 * Every reason code the engine knows, with what the rest of the service needs to know about it:
 * - `family`: the `check` name its firings carry;
 * - `weightKey`: the tenant-configurable weight(s) it uses, one per tier (defaults in `tenant-config.ts`), and
 *   `bonus`, added to a corroborated firing; or `fixedWeight`: our own weight(s), one per tier;
 * - `description`: a fixed phrase written by us, the only prose about a code that reaches an AI model
 *   (check messages never do: they interpolate caller-derived strings);
 * - `reserved`: a code of the interface that the engine does not emit yet, so it has no weight.
 * The check files take families and fixed weights from here; docs/scoring.md is checked against it.
 */
export type ReasonSpec = { code: string; family: string; description: string } & (
  | { weightKey: WeightKey | readonly WeightKey[]; bonus?: number }
  | { fixedWeight: number | readonly number[] }
  | { reserved: true }
)

export const REASONS = [
  // Network and IP
  {
    code: 'privacy_relay',
    family: 'ipRisk',
    weightKey: 'privacyRelay',
    description: "the connection uses a platform vendor's privacy relay; informational, carries no weight",
  },
  {
    code: 'datacenter_ip',
    family: 'ipRisk',
    weightKey: 'datacenterIp',
    description: 'the connection comes from a hosting or cloud network rather than a home or mobile network',
  },
  {
    code: 'vpn_ip',
    family: 'ipRisk',
    weightKey: 'proxyVpn',
    description: 'the connection goes through a commercial VPN service',
  },
  {
    code: 'proxy_ip',
    family: 'ipRisk',
    weightKey: 'proxyVpn',
    description: 'the connection goes through a known proxy, Tor exit or other anonymising relay',
  },
  {
    code: 'geo_mismatch',
    family: 'ipRisk',
    weightKey: 'geoMismatch',
    description: 'the connection is in a different country from the one the event was expected in',
  },
  // Email
  {
    code: 'disposable_email',
    family: 'emailRisk',
    weightKey: 'emailDisposable',
    description: 'the email address uses a throwaway mail service',
  },
  {
    code: 'email_no_mx',
    family: 'emailRisk',
    weightKey: 'emailNoMx',
    description: 'the email domain cannot receive mail',
  },
  {
    code: 'email_relay',
    family: 'emailRisk',
    weightKey: 'emailRelay',
    description:
      'the email address is an alias of a relay service that forwards to a real mailbox; informational, carries no weight',
  },
  {
    code: 'mailbox_reuse',
    family: 'accountRisk',
    weightKey: ['mailboxReuseMed', 'mailboxReuseHigh'],
    description: 'several different accounts use the same mailbox, counting aliases of one address as one',
  },
  {
    code: 'account_takeover',
    family: 'accountRisk',
    weightKey: 'accountTakeover',
    description: 'an established account is used from a device and a country it has never used before',
  },
  {
    code: 'gibberish_wave',
    family: 'accountRisk',
    weightKey: 'gibberishWave',
    description:
      'the account is one of an unusual number of recent sign-ups whose mailbox names look randomly generated',
  },
  {
    code: 'gibberish_email',
    family: 'emailRisk',
    weightKey: 'emailGibberish',
    description: 'the mailbox name of the email address looks randomly generated',
  },
  {
    code: 'plus_addressing',
    family: 'emailRisk',
    weightKey: 'emailPlusTag',
    description: 'the email address carries a plus tag, an easy way to make many sign-ups from one inbox',
  },
  // Browser integrity
  {
    code: 'headless_browser',
    family: 'deviceIntegrity',
    weightKey: 'headlessBrowser',
    description: 'the browser is automated or runs without a visible window',
  },
  {
    code: 'device_inconsistent',
    family: 'deviceIntegrity',
    weightKey: 'deviceInconsistent',
    description: 'the operating system the browser claims does not fit the actual device',
  },
  {
    code: 'emulated_environment',
    family: 'deviceIntegrity',
    weightKey: 'emulatedEnvironment',
    description: 'the device looks emulated, virtualised or like device-farm hardware',
  },
  {
    code: 'noise_injected',
    family: 'deviceIntegrity',
    weightKey: 'noiseInjected',
    description: 'graphics readings change within one session, a sign of fingerprint randomisation',
  },
  {
    code: 'device_tampered',
    family: 'deviceIntegrity',
    weightKey: 'deviceTampered',
    description: 'a built-in browser function used for fingerprinting has been replaced',
  },
  {
    code: 'context_mismatch',
    family: 'deviceIntegrity',
    weightKey: 'contextMismatch',
    description: 'the browser gives a different identity inside a background worker than on the page',
  },
  {
    code: 'engine_ua_mismatch',
    family: 'deviceIntegrity',
    weightKey: 'engineUaMismatch',
    description: 'the JavaScript engine is not the one the browser claims to be',
  },
  {
    code: 'os_mismatch',
    family: 'deviceIntegrity',
    weightKey: 'osMismatch',
    description: 'a reliable operating-system signal contradicts the claimed operating system',
  },
  {
    // High confidence, then medium.
    code: 'antidetect_browser',
    family: 'deviceIntegrity',
    weightKey: ['antidetectBrowserHigh', 'antidetectBrowserMed'],
    description: 'the browser shows traits of antidetect software that fakes fingerprints',
  },
  {
    code: 'timezone_mismatch',
    family: 'deviceIntegrity',
    weightKey: 'timezoneMismatch',
    description: "the device clock's time zone does not belong to the connection's country",
  },
  {
    code: 'known_spoof_signature',
    family: 'deviceIntegrity',
    weightKey: 'knownSpoofSignature',
    description: 'the TLS handshake matches a signature mostly seen in spoofed sessions',
  },
  {
    code: 'forged_beacon',
    family: 'deviceIntegrity',
    weightKey: 'forgedBeacon',
    description: 'the client is a scripted tool imitating a browser, judging by its TLS handshake',
  },
  // Mobile app integrity
  {
    code: 'app_tampered',
    family: 'mobileIntegrity',
    weightKey: 'appTampered',
    description: 'the app is hooked by instrumentation tooling or runs as a cloned copy',
  },
  {
    code: 'rooted_device',
    family: 'mobileIntegrity',
    weightKey: 'rootedDevice',
    description: 'the phone is rooted or jailbroken',
  },
  {
    code: 'sideloaded_app',
    family: 'mobileIntegrity',
    weightKey: 'sideloadedApp',
    description: 'the app was installed from outside the official app store',
  },
  {
    code: 'mock_location',
    family: 'mobileIntegrity',
    weightKey: 'mockLocation',
    description: 'the phone reports a faked location',
  },
  {
    code: 'debug_environment',
    family: 'mobileIntegrity',
    weightKey: 'debugEnvironment',
    description: 'developer debugging is enabled on the phone or in the app',
  },
  {
    code: 'auto_time_off',
    family: 'mobileIntegrity',
    weightKey: 'autoTimeOff',
    description: 'automatic time setting is switched off on the phone',
  },
  {
    code: 'vpn_active',
    family: 'mobileIntegrity',
    weightKey: 'vpnActive',
    description: 'the phone reports a VPN that network data did not identify',
  },
  // Reuse and velocity
  {
    code: 'ip_velocity',
    family: 'velocity',
    weightKey: ['ipVelocityMed', 'ipVelocityHigh'],
    description: 'many different accounts used the same connection address within ten minutes',
  },
  {
    code: 'device_reuse',
    family: 'deviceReuse',
    weightKey: ['deviceReuseLow', 'deviceReuseMed', 'deviceReuseHigh'],
    bonus: 10,
    description: 'several different accounts have used the same device',
  },
  {
    code: 'device_velocity',
    family: 'deviceVelocity',
    weightKey: 'deviceVelocity',
    description: 'one device sent an unusually large number of events within ten minutes',
  },
  // Session behaviour
  {
    code: 'vpn_drop',
    family: 'sessionBehaviour',
    weightKey: 'vpnDrop',
    description: 'during one session the device moved from a hosting or proxy address to a home address',
  },
  {
    code: 'ip_cloaking',
    family: 'sessionBehaviour',
    weightKey: 'ipCloaking',
    description: 'during one session the device moved from a home address to a hosting or proxy address',
  },
  {
    code: 'device_ip_hopping',
    family: 'sessionBehaviour',
    weightKey: 'deviceIpHopping',
    description: 'one device appeared from many different addresses in a short window',
  },
  // Operator network
  {
    code: 'abuse_ip',
    family: 'network',
    weightKey: 'abuseIp',
    description: 'the connection address has hit abuse traps that only scanners and bots touch',
  },
  {
    code: 'abusive_asn',
    family: 'network',
    weightKey: 'abusiveAsn',
    description: 'the connection belongs to a network with a high share of fraud across this service',
  },
  {
    // One, two, three or more flagging operators.
    code: 'seen_in_fraud_network',
    family: 'network',
    weightKey: ['fraudNetworkOne', 'fraudNetworkTwo', 'fraudNetworkMore'],
    description: 'a part of this event was reported as fraud by other users of this service',
  },
  // Tenant lists
  {
    code: 'blocklisted_user',
    family: 'lists',
    fixedWeight: 100,
    description: "the user account is on this customer's own blocklist, which decides the outcome",
  },
  {
    code: 'blocklisted_email',
    family: 'lists',
    fixedWeight: 100,
    description: "the email address is on this customer's own blocklist, which decides the outcome",
  },
  {
    code: 'blocklisted_phone',
    family: 'lists',
    fixedWeight: 100,
    description: "the phone number is on this customer's own blocklist, which decides the outcome",
  },
  {
    code: 'blocklisted_device',
    family: 'lists',
    fixedWeight: 100,
    description: "the device is on this customer's own blocklist, which decides the outcome",
  },
  {
    code: 'blocklisted_ip',
    family: 'lists',
    fixedWeight: 100,
    description: "the connection address is on this customer's own blocklist, which decides the outcome",
  },
  {
    code: 'allowlisted_user',
    family: 'lists',
    fixedWeight: 0,
    description: "the user account is on this customer's own allowlist, so other rules are skipped",
  },
  {
    code: 'allowlisted_email',
    family: 'lists',
    fixedWeight: 0,
    description: "the email address is on this customer's own allowlist, so other rules are skipped",
  },
  {
    code: 'allowlisted_phone',
    family: 'lists',
    fixedWeight: 0,
    description: "the phone number is on this customer's own allowlist, so other rules are skipped",
  },
  {
    code: 'allowlisted_device',
    family: 'lists',
    fixedWeight: 0,
    description: "the device is on this customer's own allowlist, so other rules are skipped",
  },
  {
    code: 'allowlisted_ip',
    family: 'lists',
    fixedWeight: 0,
    description: "the connection address is on this customer's own allowlist, so other rules are skipped",
  },
] as const satisfies readonly ReasonSpec[]

type Spec = (typeof REASONS)[number]
export type ReasonCode = Spec['code']
export type ReasonFamily = Spec['family']
export type ReasonOf<C extends ReasonCode> = Extract<Spec, { code: C }>
/** Codes with one fixed weight. */
export type FixedWeightCode = Extract<Spec, { fixedWeight: number }>['code']
/** The weight keys a code may fire with; any key for a code without configurable weights. */
export type WeightKeyOf<C extends ReasonCode> =
  ReasonOf<C> extends { weightKey: infer K }
    ? Extract<K extends readonly (infer E)[] ? E : K, WeightKey>
    : string

/** The registry by code. */
export const REASON = Object.fromEntries(REASONS.map((r) => [r.code, r])) as {
  readonly [C in ReasonCode]: ReasonOf<C>
}

export const isReasonCode = (s: string): s is ReasonCode => Object.hasOwn(REASON, s)

export function fixedWeight(code: FixedWeightCode): number {
  return REASON[code].fixedWeight
}

/**
 * Codes that do not come from the event's own signals: the operator network's and the tenant's lists'.
 * Whether an event counts as bad for its ASN's fraud rate leaves them out (docs/network.md).
 */
export const OUTSIDE_SIGNAL_FAMILIES = ['network', 'lists'] as const satisfies readonly ReasonFamily[]
export const OUTSIDE_SIGNAL_CODES: ReadonlySet<string> = new Set(
  REASONS.filter((r) => (OUTSIDE_SIGNAL_FAMILIES as readonly string[]).includes(r.family)).map((r) => r.code),
)
