import type { TenantContext } from '../../context.js'
import type { IpIntelResult } from '../../intel/ip/index.js'
import { VELOCITY_WINDOW_MS } from '../../scoring/checks/velocity.js'
import type { ConnectionClass, DeviceHistory } from '../../scoring/types.js'
import { ALL_TRAFFIC, type CollisionRate, type DeviceHistoryRows } from '../../store/devices/devices.js'
import { carriesDevice, type EventAttributes, type ObservedDevice } from '../../store/events/scored-event.js'
import type { Store, Work } from '../../store/index.js'
import type { Clock } from '../../util/clock.js'
import { newDeviceIdentity, signDeviceToken, type TokenRejection, verifyDeviceToken } from './device-token.js'

/** Collision risk of a valid token: only a copied cookie makes it cover a second person. */
export const TOKEN_COLLISION_RISK = 0.001
/** Used at rung 2 until the job has measured enough traffic. */
export const PRIOR_COLLISION_RISK = 0.1
/** Fingerprints (replayed with a valid token) a platform needs before its rate is trusted. */
export const COLLISION_MIN_SAMPLE = 50
/** Observations the collision job looks back over. */
export const COLLISION_WINDOW_MS = 90 * 24 * 3600_000
/** Token identities replayed with one fingerprint that make it *known to collide* (its own measure). */
export const COLLIDING_TOKENS = 2
/** Timeline fetched for session behaviour: sessions longer than this are cut here. */
export const TIMELINE_WINDOW_MS = 24 * 3600_000

/** How the event's device was resolved, decided before the write (no history needed). */
export interface DeviceResolution extends ObservedDevice {
  /** Whether the event carried a fingerprint or a device token: only then is it observed. */
  observed: boolean
  fingerprint: string | null
  /** The event's network prefix (/24 or /48), the "network" of rung 2; null without a usable IP. */
  network: string | null
  /** The freshly signed token for the response; it carries `resolvedId`. */
  token: string
  tokenRejected: TokenRejection | null
  collisionRisk: number
  riskMeasured: boolean
  /** The event's account, which decides whether a rung-2 identity may be handed over. */
  userId: string | null
}

export function connectionClass(ip: IpIntelResult | null): ConnectionClass | null {
  if (!ip) return null
  if (ip.isPrivacyRelay) return 'relay'
  if (ip.isDatacenter) return 'datacenter'
  if (ip.isProxy || ip.isVpn || ip.isTor) return 'proxy'
  return 'residential'
}

/** Measured risk for the platform when the job has one, else the all-traffic average, else the prior. */
export function collisionRiskFor(
  rates: Map<string, CollisionRate>,
  rung: 1 | 2 | 3,
  platform: string | null,
): { risk: number; measured: boolean } {
  if (rung === 1) return { risk: TOKEN_COLLISION_RISK, measured: false }
  if (rung === 3) return { risk: 0, measured: false }
  const own = platform ? rates.get(platform) : undefined
  if (own) return { risk: own.rate, measured: true }
  const all = rates.get(ALL_TRAFFIC)
  return { risk: all ? all.rate : PRIOR_COLLISION_RISK, measured: false }
}

/**
 * Whether a rung-2 visitor may take the identity issued to its fingerprint on its network: never when
 * the fingerprint is known to collide (several people's tokens were replayed with it), and never when
 * the visitor's account is a newcomer to that identity (the identity has accounts and this one is not
 * among them: a colleague with the same laptop image, not the same person without a cookie).
 */
function mayInherit(
  issued: string | null,
  knownDevices: number,
  userId: string | null,
  accounts: { anyAccount: boolean; ownAccount: boolean },
): boolean {
  if (issued === null || knownDevices >= COLLIDING_TOKENS) return false
  if (userId === null) return true
  return accounts.ownAccount || !accounts.anyAccount
}

/**
 * Rung 1 when a valid token of this tenant is replayed; else rung 2 when both a fingerprint and an IP
 * came, resolving to the identity most recently issued to that fingerprint on that network prefix (read in
 * one statement with the fingerprint's token count and the identity's accounts) when `mayInherit` allows,
 * or to a new identity; else rung 3, a new identity that links nothing. A rejected token falls through to
 * the lower rungs. The reported identity is always the one the freshly signed token carries, so replaying
 * that token (rung 1) keeps it, on any network. A unit of reads, so the caller can send its one read
 * with the score's other reads before the write (one statement on PostgreSQL).
 */
export function* resolveDevice(
  ctx: TenantContext,
  input: {
    fingerprint: string | null
    token: string | null
    ip: IpIntelResult | null
    userId?: string | null
    /** The client reported standardised fonts (a privacy-hardened browser): one fingerprint for many. */
    standardized?: boolean
  },
  now: number,
): Work<DeviceResolution> {
  let rung: 1 | 2 | 3 = 3
  let tokenRejected: TokenRejection | null = null
  let identity: string | null = null
  if (input.token !== null) {
    const check = verifyDeviceToken(ctx.hasher, ctx.tenant.id, input.token, now)
    if (check.ok) {
      identity = check.identity
      rung = 1
    } else tokenRejected = check.reason
  }
  const network = input.ip?.prefix ?? null
  let knownDevices: number | undefined
  if (rung !== 1 && input.fingerprint !== null && network !== null) {
    rung = 2
    const userId = input.userId ?? null
    const facts = yield* ctx.store.devices.networkIdentity(ctx.tenant.id, input.fingerprint, network, userId)
    // A standardised fingerprint collides by construction, whether or not tokens were replayed with it.
    knownDevices = input.standardized ? Math.max(facts.tokens, COLLIDING_TOKENS) : facts.tokens
    identity = mayInherit(facts.issued, knownDevices, userId, facts) ? facts.issued : null
  }
  const resolvedId = identity ?? newDeviceIdentity()
  return {
    observed: input.fingerprint !== null || input.token !== null,
    fingerprint: input.fingerprint,
    network,
    rung,
    resolvedId,
    token: signDeviceToken(ctx.hasher, ctx.tenant.id, resolvedId, now),
    tokenRejected,
    connection: connectionClass(input.ip),
    platform: null,
    ...(knownDevices === undefined ? {} : { knownDevices }),
    userId: input.userId ?? null,
    ...(input.standardized ? { standardized: true } : {}),
    // Set by withCollisionRisk once the measured rates are at hand.
    collisionRisk: 0,
    riskMeasured: false,
  }
}

/** Sets the collision risk of the resolution's rung and platform (`rates`: the measured rates in memory). */
export function withCollisionRisk(d: DeviceResolution, rates: Map<string, CollisionRate>): DeviceResolution {
  const { risk, measured } = collisionRiskFor(rates, d.rung, d.platform)
  d.collisionRisk = risk
  d.riskMeasured = measured
  return d
}

/**
 * A batch is resolved row by row in parallel, before its rows are written, so a row cannot find the
 * identity an earlier row of the same batch issued. This pass applies the rung-2 rule in row order:
 * a rung-2 row takes the identity the latest earlier row issued to its fingerprint on its network
 * (earlier rows are more recent than anything stored), and its token is re-signed for it.
 */
export function linkWithinBatch(ctx: TenantContext, devices: readonly DeviceResolution[]): void {
  const issued = new Map<string, { id: string; user: string | null }>()
  const now = ctx.clock.now()
  for (const d of devices) {
    if (d.rung === 3 || d.fingerprint === null || d.network === null) continue
    const key = `${d.fingerprint}\u0000${d.network}`
    const earlier = issued.get(key)
    // The same rule as mayInherit: no hand-over for a fingerprint known to collide or to a newcomer.
    const allowed =
      (d.knownDevices ?? 0) < COLLIDING_TOKENS &&
      (earlier?.user == null || d.userId === null || earlier.user === d.userId)
    if (d.rung === 2 && earlier !== undefined && earlier.id !== d.resolvedId && allowed) {
      d.resolvedId = earlier.id
      d.token = signDeviceToken(ctx.hasher, ctx.tenant.id, earlier.id, now)
    }
    issued.set(key, { id: d.resolvedId, user: d.userId ?? earlier?.user ?? null })
  }
}

export interface DeviceFacts {
  history: DeviceHistory
  rows: DeviceHistoryRows
  /** Records the event's device links: the caller runs it with the event's other writes. */
  write: Work<void>
}

/**
 * Reads the device's history for one event, inside the writer's unit of work: the counters include this
 * event, and the timeline holds the device's earlier observations. The links that make the counters
 * include it are written by `write`, which the caller runs before the next event's reads. Null for an
 * event that carried no device.
 */
export function* deviceHistory(
  ctx: TenantContext,
  e: EventAttributes,
  now: number,
): Work<DeviceFacts | null> {
  if (!carriesDevice(e)) return null
  const { rung, connection } = e.device
  const current = { ms: now, ipHash: e.ipHash, connection }
  const { write, ...rows } = yield* ctx.store.devices.history(e, now, now - TIMELINE_WINDOW_MS)
  if (rung === 3) {
    // Rung 3 links nothing: only this event counts.
    const history: DeviceHistory = {
      rung: 3,
      accounts: e.userId ? 1 : 0,
      accountsSameNetwork: 0,
      recentEvents: 1,
      current,
      timeline: [],
    }
    return {
      history,
      rows: {
        fingerprintAccounts: e.userId ? 1 : 0,
        fingerprintNetworkAccounts: 0,
        deviceAccounts: e.userId ? 1 : 0,
        deviceIps: e.ipHash ? 1 : 0,
        fingerprintIps: 0,
        oneBrowser: false,
        timeline: [],
      },
      write,
    }
  }
  // Velocity counts scored events: watch-mode beacons take part in session behaviour only.
  const recent = rows.timeline.filter((p) => !p.beacon && p.ms > now - VELOCITY_WINDOW_MS).length
  // A fingerprint known to collide counts accounts per known device (its accounts over the token
  // identities replayed with it), so strangers with identical devices are not one device; a rare
  // fingerprint (a farm that keeps no cookies) keeps its full count on every network.
  const known = rung === 2 ? (e.device.knownDevices ?? 0) : 0
  const perDevice = (n: number) =>
    known >= COLLIDING_TOKENS && n > 0 ? Math.max(1, Math.round(n / known)) : n
  // A standardised fingerprint (privacy-hardened browsers, no cookies kept) has no per-device measure:
  // it counts the accounts of its network only.
  const standardized = rung === 2 && e.device.standardized === true
  const accounts =
    rung === 1
      ? rows.deviceAccounts
      : standardized
        ? rows.fingerprintNetworkAccounts
        : perDevice(rows.fingerprintAccounts)
  const history: DeviceHistory = {
    rung,
    accounts,
    accountsSameNetwork: rows.fingerprintNetworkAccounts,
    recentEvents: recent + 1,
    current,
    timeline: rows.timeline,
  }
  return { history: withOneBrowserAccounts(history, rows, standardized), rows, write }
}

/** Addresses a fingerprint must have been seen from before one browser's accounts count undivided. */
export const ONE_BROWSER_MIN_IPS = 4

/**
 * One browser that clears its cookie between signups gets a new token identity for each account, so at
 * rung 1 each token carries only its own accounts and at rung 2 the fingerprint looks known to collide.
 * When the fingerprint's observations show one browser (`oneBrowser`: its identities followed one
 * another and never alternated, and one of them, replayed, carried several accounts) and it was seen
 * from ONE_BROWSER_MIN_IPS addresses or more, its accounts count undivided. Strangers with identical
 * devices alternate as soon as two of them come back; a home or an office, one network, is counted by
 * the same-network corroboration instead. Corroboration is left as it was.
 */
export function withOneBrowserAccounts(
  h: DeviceHistory,
  rows: DeviceHistoryRows,
  standardized: boolean,
): DeviceHistory {
  // Rung 3 links nothing, so its rows never show one browser.
  if (standardized || !rows.oneBrowser || rows.fingerprintIps < ONE_BROWSER_MIN_IPS) return h
  if (rows.fingerprintAccounts <= h.accounts) return h
  return { ...h, accounts: rows.fingerprintAccounts, accountsOneBrowser: rows.fingerprintAccounts }
}

/**
 * The accounts one person made with aliases of one mailbox on a device of this fingerprint count as one
 * device's, undivided, at rungs 1 and 2: strangers with identical devices do not share an inbox, and a
 * device that lost its cookie between signups (a new token per account) is still the device that made
 * them. `sameMailbox` is the event's mailbox's accounts on the fingerprint, this one included (null
 * without a mailbox, an account or a linked fingerprint). Corroboration is left as it was.
 */
export function withMailboxAccounts(h: DeviceHistory, sameMailbox: number | null): DeviceHistory {
  if (sameMailbox === null || sameMailbox < 2 || h.rung === 3) return h
  return { ...h, accounts: Math.max(h.accounts, sameMailbox), accountsSameMailbox: sameMailbox }
}

export interface CollisionMeasurement {
  rates: CollisionRate[]
  /** Fingerprints in the whole sample, measured or not. */
  sample: number
}

/**
 * The background job: for each platform, the share of fingerprints replayed with a valid token that
 * turned out to carry two or more token identities. Platforms under `minSample` fingerprints get no
 * rate of their own (scoring falls back to the all-traffic average, which needs the same sample).
 */
export async function measureCollisionRisk(
  store: Store,
  clock: Clock,
  options: { minSample?: number; windowMs?: number } = {},
): Promise<CollisionMeasurement> {
  const minSample = options.minSample ?? COLLISION_MIN_SAMPLE
  const now = clock.now()
  const groups = await store.devices.measureCollisions(now - (options.windowMs ?? COLLISION_WINDOW_MS))
  const rate = (collided: number, fingerprints: number) =>
    Math.round((collided / fingerprints) * 10_000) / 10_000
  const rates: CollisionRate[] = []
  let fingerprints = 0
  let collided = 0
  for (const g of groups) {
    fingerprints += g.fingerprints
    collided += g.collided
    if (g.platform !== '' && g.fingerprints >= minSample) {
      rates.push({ ...g, rate: rate(g.collided, g.fingerprints), measuredMs: now })
    }
  }
  if (fingerprints >= minSample) {
    rates.push({
      platform: ALL_TRAFFIC,
      fingerprints,
      collided,
      rate: rate(collided, fingerprints),
      measuredMs: now,
    })
  }
  await store.devices.saveRates(rates, now)
  return { rates, sample: fingerprints }
}
