import { REASON } from '../reasons.js'
import type { Check, CheckFamily, DeviceHistory, DevicePoint } from '../types.js'
import { fire } from './fire.js'
import { VELOCITY_WINDOW_MS } from './velocity.js'

/** Lowest account count that fires device_reuse (the low tier). */
export const REUSE_LOW_ACCOUNTS = 2
/** Accounts on one fingerprint and one network that corroborate a reuse firing. */
export const REUSE_CORROBORATING_ACCOUNTS = 3
/** Extra weight of a corroborated device_reuse firing. */
export const REUSE_CORROBORATION_BONUS = REASON.device_reuse.bonus
/** A gap this long or longer between two observations of a device ends its session. */
export const SESSION_GAP_MS = 30 * 60_000
/** Distinct IPs within one session that fire device_ip_hopping. */
export const HOPPING_IPS = 5

/** Accounts sharing one device identity, in three tiers from the tenant's thresholds and weights. */
export const deviceReuse: CheckFamily = (input) => {
  const d = input.history.device
  if (!d || d.rung === 3) return []
  const n = d.accounts
  const t = input.config.thresholds
  const w = input.config.weights
  if (n < REUSE_LOW_ACCOUNTS) return []
  const tier = n >= t.deviceReuseHigh ? 'high' : n >= t.deviceReuseMed ? 'medium' : 'low'
  const key = tier === 'high' ? 'deviceReuseHigh' : tier === 'medium' ? 'deviceReuseMed' : 'deviceReuseLow'
  const threshold =
    tier === 'high' ? t.deviceReuseHigh : tier === 'medium' ? t.deviceReuseMed : REUSE_LOW_ACCOUNTS
  const corroborated = d.rung === 1 || d.accountsSameNetwork >= REUSE_CORROBORATING_ACCOUNTS
  const how =
    d.accountsOneBrowser !== undefined
      ? 'one browser that cleared its cookie between them'
      : d.rung === 1
        ? 'a replayed device token'
        : 'this device fingerprint'
  return [
    fire('device_reuse', {
      key,
      weight: w[key] + (corroborated ? REUSE_CORROBORATION_BONUS : 0),
      message: `${n} different accounts have used the same device, identified by ${how}.`,
      evidence: {
        accounts: n,
        accounts_same_network: d.accountsSameNetwork,
        ...(d.accountsSameMailbox === undefined ? {} : { accounts_same_mailbox: d.accountsSameMailbox }),
        ...(d.accountsOneBrowser === undefined ? {} : { accounts_one_browser: d.accountsOneBrowser }),
        tier,
        threshold,
        corroborated,
        resolution_rung: d.rung,
      },
    }),
  ]
}

/** Events on the resolved device in the velocity window. */
export const deviceVelocity: CheckFamily = (input) => {
  const d = input.history.device
  if (!d || d.rung === 3) return []
  const t = input.config.thresholds.deviceVelocity
  if (d.recentEvents < t) return []
  return [
    fire('device_velocity', {
      key: 'deviceVelocity',
      weight: input.config.weights.deviceVelocity,
      message: `This device sent ${d.recentEvents} events in the last 10 minutes.`,
      evidence: { events: d.recentEvents, window_minutes: VELOCITY_WINDOW_MS / 60_000, threshold: t },
    }),
  ]
}

const risky = (p: DevicePoint) => p.connection === 'datacenter' || p.connection === 'proxy'
/** Points that take part in session behaviour: a known connection that is not a privacy relay. */
const counts = (p: DevicePoint) => p.connection !== null && p.connection !== 'relay'

/** The earlier observations of the current session: walk back until a gap of SESSION_GAP_MS or more. */
export function currentSession(d: DeviceHistory): DevicePoint[] {
  const out: DevicePoint[] = []
  let prev = d.current.ms
  for (const p of d.timeline) {
    if (prev - p.ms >= SESSION_GAP_MS) break
    out.push(p)
    prev = p.ms
  }
  return out
}

/** vpn_drop, ip_cloaking and device_ip_hopping on the resolved device's current session. */
export const sessionBehaviour: CheckFamily = (input) => {
  const d = input.history.device
  if (!d || d.rung === 3) return []
  const session = currentSession(d)
  const out: Check[] = []
  const cur = d.current
  const previous = session.find(counts)
  const sessionMinutes = session.length ? Math.round((cur.ms - session[session.length - 1]!.ms) / 60_000) : 0
  if (counts(cur) && previous) {
    if (cur.connection === 'residential' && risky(previous)) {
      out.push(
        fire('vpn_drop', {
          key: 'vpn_drop',
          weight: input.config.weights.vpnDrop,
          message: `In the same session the device switched from a ${previous.connection} address to a residential one.`,
          evidence: { from: previous.connection, to: 'residential', session_minutes: sessionMinutes },
        }),
      )
    } else if (risky(cur) && previous.connection === 'residential') {
      out.push(
        fire('ip_cloaking', {
          key: 'ip_cloaking',
          weight: input.config.weights.ipCloaking,
          message: `In the same session the device switched from a residential address to a ${cur.connection} one.`,
          evidence: { from: 'residential', to: cur.connection, session_minutes: sessionMinutes },
        }),
      )
    }
  }
  const ips = new Set<string>()
  for (const p of [cur, ...session]) if (counts(p) && p.ipHash) ips.add(p.ipHash)
  if (ips.size >= HOPPING_IPS) {
    out.push(
      fire('device_ip_hopping', {
        key: 'device_ip_hopping',
        weight: input.config.weights.deviceIpHopping,
        message: `The device was seen from ${ips.size} different IP addresses in one session.`,
        evidence: { distinct_ips: ips.size, threshold: HOPPING_IPS, session_minutes: sessionMinutes },
      }),
    )
  }
  return out
}
