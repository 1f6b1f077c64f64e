import type { DeviceProfile } from '../../schemas/score.js'
import type { DeviceFacts } from '../devices/device.js'
import type { PreparedEvent } from './score-inputs.js'

/** The score response's `device` object, for an event that carried a device. */
export function deviceProfile(p: PreparedEvent, facts: DeviceFacts): DeviceProfile {
  const d = p.device
  const r = facts.rows
  const ip = p.ip?.lookup ?? null
  const flags = p.deviceFlags
  const seen = p.beacon
  return {
    id: d.fingerprint,
    resolved_id: d.resolvedId,
    resolution: d.rung === 1 ? 'deterministic' : 'probabilistic',
    resolution_rung: d.rung,
    collision_risk: d.collisionRisk,
    risk_measured: d.riskMeasured,
    token_rejected: d.tokenRejected,
    account_count: d.fingerprint ? r.fingerprintAccounts : r.deviceAccounts,
    account_count_same_network: r.fingerprintNetworkAccounts,
    distinct_ips: r.deviceIps,
    unique: r.deviceIps <= 1,
    connection_type: ip ? (ip.isDatacenter && !ip.isPrivacyRelay ? 'datacenter' : 'residential') : null,
    // From the browser's own beacon (its user agent, parsed on the server), when there is one.
    os: seen?.os ?? null,
    browser: seen?.browser ?? null,
    mobile: seen ? seen.mobile : null,
    // The client integrity flags, echoed (completed by the beacon's).
    is_headless: flags?.is_headless ?? null,
    ua_consistent: flags?.ua_consistent ?? null,
    is_emulated: flags?.is_emulated ?? null,
    is_noise_injected: flags?.is_noise_injected ?? null,
    is_tampered: flags?.is_tampered ?? null,
    is_context_mismatch: flags?.is_context_mismatch ?? null,
    is_engine_mismatch: flags?.is_engine_mismatch ?? null,
    is_os_mismatch: flags?.is_os_mismatch ?? null,
    timezone: p.timezone?.zone ?? null,
    // The JA4 of the beacon's connection: whether there was one, and the tool it belongs to.
    ja4: p.tls !== null,
    ja4_known_tool: p.tls?.knownTool ?? null,
  }
}
