import type { Static } from '@fastify/type-provider-typebox'
import type { TenantContext } from '../../context.js'
import type { ScoreRequest } from '../../schemas/score.js'
import type { NetworkSignals } from '../../scoring/network-signals.js'
import type { AttributeValue, RuleFacts } from '../../scoring/rules/facts.js'
import type { AttributeSpecs } from '../../scoring/rules/types.js'
import type { ConfigOverrides, ScoringConfig } from '../../scoring/tenant-config.js'
import type { DeviceFlags, ListMatch, TlsSignals } from '../../scoring/types.js'
import type { BeaconObservation } from '../../store/devices/beacons.js'
import { none, together } from '../../store/engine/db.js'
import type { EventAttributes } from '../../store/events/scored-event.js'
import type { ListKey } from '../../store/rules/lists.js'
import type { StoredConfig } from '../../store/rules/tenant-config.js'
import { beaconSession, bindBeacon, mergeDeviceFlags } from '../devices/beacon.js'
import {
  type DeviceResolution,
  resolveDevice,
  TIMELINE_WINDOW_MS,
  withCollisionRisk,
} from '../devices/device.js'
import { beaconTls } from '../devices/ja4-signatures.js'
import { attributeHash } from '../rules/attribute-hash.js'
import { effectiveOf, type LiteralHash, scoringConfig } from '../rules/compile.js'
import { gatherNetwork } from './network-signals.js'
import { type CountedValue, ruleFacts, tenantAttributes } from './rule-facts.js'
import { type EmailInput, emailInput, type IpInput, ipInput, phoneInput } from './score-identifiers.js'

export type ScoreBody = Static<typeof ScoreRequest>

/** Everything about one event that does not depend on the tenant's history, gathered before the write. */
export interface PreparedEvent {
  body: ScoreBody
  /** What storage records of the event (hashes and coarse attributes), built once here. */
  attributes: EventAttributes
  ip: IpInput | null
  email: EmailInput | null
  timezone: { zone: string; countries: string[] | null } | null
  lists: ListMatch[]
  config: ScoringConfig
  /** The tenant's config version `config` is. */
  configVersion: number
  /** Device resolution (token, rung, identity); history is read later, on the write transaction. */
  device: DeviceResolution
  /** The beacon bound to this score (services/devices/beacon.ts bindBeacon): what the browser itself showed. */
  beacon: BeaconObservation | null
  /** The request's device flags completed by the beacon's (services/devices/beacon.ts mergeDeviceFlags). */
  deviceFlags: DeviceFlags | null
  /** The JA4 of the beacon's connection, what it matched (known tool, spoofing signature); null without one. */
  tls: TlsSignals | null
  network: NetworkSignals
  /** What the tenant's rules read beyond the signals (event name and attributes, e-mail and phone facts). */
  facts: RuleFacts
  /** The tenant's counted attributes this event carries, by the keyed hash of their value. */
  counted: CountedValue[]
  warnings: string[]
}

/** One match per (list, type): an address on a list both alone and inside a range is on it once. */
function listMatches(entries: readonly { list: string; type: ListMatch['type'] }[]): ListMatch[] {
  const seen = new Set<string>()
  const out: ListMatch[] = []
  for (const e of entries) {
    const k = `${e.list}\u0000${e.type}`
    if (seen.has(k)) continue
    seen.add(k)
    out.push({ list: e.list, type: e.type })
  }
  return out
}

/**
 * The named lists the event's hashed attribute values are on (`attribute` entries hold the same keyed
 * hash): one match per list and attribute key, a list attribute matching through any of its strings.
 */
async function attributeMatches(
  ctx: TenantContext,
  attributes: Record<string, AttributeValue>,
  specs: AttributeSpecs | undefined,
  nowMs: number,
): Promise<ListMatch[]> {
  const keysOf = new Map<string, string[]>()
  for (const [key, value] of Object.entries(attributes)) {
    if (specs?.[key]?.hashed !== true) continue
    for (const hash of Array.isArray(value) ? value : [String(value)]) {
      const keys = keysOf.get(hash) ?? []
      if (!keys.includes(key)) keys.push(key)
      keysOf.set(hash, keys)
    }
  }
  if (keysOf.size === 0) return []
  const lookups = [...keysOf.keys()].map((valueKey) => ({ type: 'attribute' as const, valueKey }))
  const entries = await ctx.store.lists.match(ctx.tenant.id, lookups, nowMs)
  const seen = new Set<string>()
  const out: ListMatch[] = []
  for (const e of entries)
    for (const key of keysOf.get(e.valueKey) ?? []) {
      const k = `${e.list}\u0000${key}`
      if (seen.has(k)) continue
      seen.add(k)
      out.push({ list: e.list, type: 'attribute', attribute: key })
    }
  return out
}

/**
 * The engine's config of a stored config, built once per stored copy: the cached copy lives until a
 * write drops it (store/engine/invalidation.ts), so its weights and thresholds were merged with the
 * defaults again on every score. The built config is shared by every score of that copy: read only.
 */
const engineConfigs = new WeakMap<StoredConfig, { tenantId: string; config: ScoringConfig }>()

function engineConfig(stored: StoredConfig, tenantId: string, hash: LiteralHash): ScoringConfig {
  const known = engineConfigs.get(stored)
  if (known !== undefined && known.tenantId === tenantId) return known.config
  const config = scoringConfig(effectiveOf(stored.overrides as ConfigOverrides), hash)
  engineConfigs.set(stored, { tenantId, config })
  return config
}

/** Empty strings count as absent. */
const present = (s: string | undefined): string | null =>
  s === undefined || s.trim() === '' ? null : s.trim()

/**
 * Each identifier on its own (score-identifiers.ts), then what needs several of them at once: list
 * matches, the tenant config, the device resolution and the network signals.
 */
export async function prepareEvent(
  ctx: TenantContext,
  body: ScoreBody,
  storedConfig?: StoredConfig,
): Promise<PreparedEvent> {
  const userId = present(body.user_id)
  const deviceId = present(body.device_id)
  const rawIp = present(body.ip)
  const rawEmail = present(body.email)
  const rawPhone = present(body.phone)
  const ip = rawIp ? ipInput(ctx, rawIp) : null
  const email = rawEmail ? await emailInput(ctx, rawEmail) : null
  const phone = rawPhone ? phoneInput(ctx, rawPhone, present(body.phone_country)) : null

  const warnings: string[] = []
  if (ip) warnings.push(...ip.warnings)
  if (email) warnings.push(...email.warnings)
  // Matched in this order, which is the order list checks fire in.
  const listKeys: ListKey[] = []
  if (userId) listKeys.push({ type: 'user', valueKey: userId })
  if (deviceId) listKeys.push({ type: 'device', valueKey: deviceId })
  if (ip?.listKey) listKeys.push(ip.listKey)
  if (email?.listKey) listKeys.push(email.listKey)
  if (phone?.listKey) listKeys.push(phone.listKey)

  const lookup = ip?.lookup ?? null
  const attributes: EventAttributes = {
    tenantId: ctx.tenant.id,
    event: body.event,
    userId,
    deviceId,
    // Set below, once the device is resolved.
    device: null,
    emailHash: email?.hash ?? null,
    emailDomain: email?.analysis.domain ?? null,
    ipHash: ip?.hash ?? null,
    ipBlockHash: ip?.blockHash ?? null,
    ipPrefix: lookup?.prefix ?? null,
    asn: lookup?.asn ?? null,
    ipCountry: lookup?.country ?? null,
    phoneHash: phone?.hash ?? null,
    phoneCountry: phone?.country ?? null,
  }
  const zone = present(body.timezone)
  const now = ctx.clock.now()
  const visitId = present(body.visit_id)
  // A tenant that never sent a beacon has none to bind (a memory read after the first score).
  const beacons = deviceId !== null && (await ctx.store.beacons.anySent(ctx.tenant.id))
  const [matches, stored, network, rates, [resolved, beacon, session]] = await Promise.all([
    ctx.store.lists.match(ctx.tenant.id, listKeys, now, ip?.rangeKeys ?? undefined),
    storedConfig ? Promise.resolve(storedConfig) : ctx.store.config.cached(ctx.tenant.id),
    gatherNetwork(ctx, attributes, now),
    ctx.store.devices.cachedRates(now),
    // The device's, the beacon's and the watch session's reads: one round trip on PostgreSQL, shared with
    // other requests' (or the batch's other rows') reads of the same turn.
    ctx.store.db.read(() =>
      together(
        resolveDevice(
          ctx,
          {
            fingerprint: deviceId,
            token: present(body.device_token),
            ip: lookup,
            userId,
            standardized: body.device?.is_font_standardized === true,
          },
          now,
        ),
        beacons
          ? bindBeacon(ctx, { deviceId, ip: ip?.parsed ?? null, ipHash: ip?.hash ?? null, visitId }, now)
          : none(null),
        beacons ? beaconSession(ctx, { deviceId, visitId }, now - TIMELINE_WINDOW_MS) : none(null),
      ),
    ),
  ])
  const device = withCollisionRisk(resolved, rates)
  if (device.observed) attributes.device = session ? { ...device, beaconSession: session } : device
  // Hashed attributes are replaced by their keyed hash here, before anything records or evaluates them.
  const hash = attributeHash(ctx.hasher, ctx.tenant.id)
  const declared = tenantAttributes(body.attributes, stored.overrides.attributes, hash.hash)
  return {
    body,
    attributes,
    ip,
    email,
    timezone: zone ? { zone, countries: ctx.intel.timezoneCountries(zone) } : null,
    lists: [
      ...listMatches(matches),
      ...(await attributeMatches(ctx, declared.attributes, stored.overrides.attributes, now)),
    ],
    config: engineConfig(stored, ctx.tenant.id, hash),
    configVersion: stored.version,
    device,
    beacon,
    deviceFlags: mergeDeviceFlags(body.device, beacon),
    tls: beaconTls(beacon?.ja4, ctx.ja4Signatures),
    network,
    facts: ruleFacts({ ...body, attributes: declared.attributes }, userId, email, phone, device),
    counted: declared.counted,
    warnings,
  }
}
