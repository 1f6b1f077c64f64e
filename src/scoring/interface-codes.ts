/**
 * Every reason code the interface itself defines (its reason-code tables); the registry in reasons.ts
 * holds these and our own. The quality simulator uses the split to tell what the interface's weights
 * decide from what our signals do (docs/quality.md).
 */
export const INTERFACE_CODES: readonly string[] = [
  'datacenter_ip',
  'abuse_ip',
  'abusive_asn',
  'proxy_ip',
  'vpn_ip',
  'privacy_relay',
  'geo_mismatch',
  'headless_browser',
  'device_inconsistent',
  'emulated_environment',
  'noise_injected',
  'device_tampered',
  'context_mismatch',
  'engine_ua_mismatch',
  'os_mismatch',
  'timezone_mismatch',
  'known_spoof_signature',
  'forged_beacon',
  'device_reuse',
  'ip_velocity',
  'device_velocity',
  'vpn_drop',
  'ip_cloaking',
  'device_ip_hopping',
  'disposable_email',
  'email_no_mx',
  'gibberish_email',
  'plus_addressing',
  'seen_in_fraud_network',
  ...['ip', 'email', 'device', 'user'].flatMap((t) => [`blocklisted_${t}`, `allowlisted_${t}`]),
]
