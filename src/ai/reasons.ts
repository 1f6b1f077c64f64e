/**
 * Fixed descriptions of every reason code, written by us. They are the only prose about a check that
 * reaches the model: check messages are never sent, because they interpolate caller-derived strings.
 */
const DESCRIPTIONS: Record<string, string> = {
  // Network and IP
  datacenter_ip: 'the connection comes from a hosting or cloud network rather than a home or mobile network',
  abuse_ip: 'the connection address has hit abuse traps that only scanners and bots touch',
  abusive_asn: 'the connection belongs to a network with a high share of fraud across this service',
  proxy_ip: 'the connection goes through a known proxy, Tor exit or other anonymising relay',
  vpn_ip: 'the connection goes through a commercial VPN service',
  privacy_relay: "the connection uses a platform vendor's privacy relay; informational, carries no weight",
  geo_mismatch: 'the connection is in a different country from the one the event was expected in',
  // Browser integrity
  headless_browser: 'the browser is automated or runs without a visible window',
  device_inconsistent: 'the operating system the browser claims does not fit the actual device',
  emulated_environment: 'the device looks emulated, virtualised or like device-farm hardware',
  noise_injected: 'graphics readings change within one session, a sign of fingerprint randomisation',
  device_tampered: 'a built-in browser function used for fingerprinting has been replaced',
  context_mismatch: 'the browser gives a different identity inside a background worker than on the page',
  engine_ua_mismatch: 'the JavaScript engine is not the one the browser claims to be',
  os_mismatch: 'a reliable operating-system signal contradicts the claimed operating system',
  timezone_mismatch: "the device clock's time zone does not belong to the connection's country",
  known_spoof_signature: 'the TLS handshake matches a signature mostly seen in spoofed sessions',
  forged_beacon: 'the client is a scripted tool imitating a browser, judging by its TLS handshake',
  antidetect_browser: 'the browser shows traits of antidetect software that fakes fingerprints',
  // Mobile app integrity
  app_tampered: 'the app is hooked by instrumentation tooling or runs as a cloned copy',
  rooted_device: 'the phone is rooted or jailbroken',
  sideloaded_app: 'the app was installed from outside the official app store',
  mock_location: 'the phone reports a faked location',
  debug_environment: 'developer debugging is enabled on the phone or in the app',
  vpn_active: 'the phone reports a VPN that network data did not identify',
  auto_time_off: 'automatic time setting is switched off on the phone',
  // Reuse and velocity
  device_reuse: 'several different accounts have used the same device',
  ip_velocity: 'many different accounts used the same connection address within ten minutes',
  device_velocity: 'one device sent an unusually large number of events within ten minutes',
  // Session behaviour
  vpn_drop: 'during one session the device moved from a hosting or proxy address to a home address',
  ip_cloaking: 'during one session the device moved from a home address to a hosting or proxy address',
  device_ip_hopping: 'one device appeared from many different addresses in a short window',
  // Email
  disposable_email: 'the email address uses a throwaway mail service',
  email_no_mx: 'the email domain cannot receive mail',
  gibberish_email: 'the mailbox name of the email address looks randomly generated',
  plus_addressing: 'the email address carries a plus tag, an easy way to make many sign-ups from one inbox',
  // Operator network and tenant lists
  seen_in_fraud_network: 'a part of this event was reported as fraud by other users of this service',
  blocklisted_ip: "the connection address is on this customer's own blocklist, which decides the outcome",
  blocklisted_email: "the email address is on this customer's own blocklist, which decides the outcome",
  blocklisted_device: "the device is on this customer's own blocklist, which decides the outcome",
  blocklisted_user: "the user account is on this customer's own blocklist, which decides the outcome",
  allowlisted_ip: "the connection address is on this customer's own allowlist, so other rules are skipped",
  allowlisted_email: "the email address is on this customer's own allowlist, so other rules are skipped",
  allowlisted_device: "the device is on this customer's own allowlist, so other rules are skipped",
  allowlisted_user: "the user account is on this customer's own allowlist, so other rules are skipped",
}

const GENERIC = 'another risk rule of this service fired'

/** Our codes are lower snake case; anything else is not ours and is never echoed into a prompt. */
const CODE_SHAPE = /^[a-z][a-z0-9_]{1,47}$/

export const KNOWN_REASON_CODES: readonly string[] = Object.keys(DESCRIPTIONS)

/** The code as it may appear in a prompt: itself when it has our shape, else a neutral placeholder. */
export function safeReasonCode(reason: string): string {
  return CODE_SHAPE.test(reason) ? reason : 'other_signal'
}

export function describeReason(reason: string): string {
  return Object.hasOwn(DESCRIPTIONS, reason) ? DESCRIPTIONS[reason]! : GENERIC
}
