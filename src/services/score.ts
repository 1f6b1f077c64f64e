import type { Explainer, ExplanationInput } from '../ai/index.js'
import { VELOCITY_WINDOW_MS } from '../scoring/checks/velocity.js'
import { score } from '../scoring/engine.js'
import { templateExplanation } from '../scoring/explain.js'
import type { Check, EngineResult } from '../scoring/types.js'
import type { GroupCounters } from '../store/aggregates.js'
import type { Work } from '../store/db.js'
import { mapLimit } from '../util/pool.js'
import { uuidv7 } from '../util/uuid.js'
import type { TenantCtx } from './context.js'
import { type DeviceProfile, deviceHistory, deviceProfile } from './device.js'
import type { GroupWriter } from './group-writer.js'
import type { IdentifierDeps } from './identifiers.js'
import type { AsnRates } from './network.js'
import { consumeQuota } from './quota.js'
import { assertQuotaFits } from './quota-check.js'
import { deviceFlags, type PreparedEvent, prepareEvent, type ScoreBody } from './score-inputs.js'

export interface ScoreDeps extends IdentifierDeps {
  writer: GroupWriter
  asnRates: AsnRates
  explainer: Explainer
}

export type ScoreCtx = TenantCtx & ScoreDeps

export interface ScoreResponse {
  event_id: string
  score: number
  verdict: EngineResult['verdict']
  reasons: string[]
  reason_text: string
  checks: Check[]
  identity?: { email_canonical: string | null; email_is_aliased: boolean; email_alias_tricks: string[] }
  device?: DeviceProfile
  device_token?: string
  warnings?: string[]
}

interface Scored {
  id: string
  prepared: PreparedEvent
  result: EngineResult
  /** The device profile, when the event carried a fingerprint or a device token. */
  device?: DeviceProfile
}

/** Checks that come from the shared network or the tenant's lists: left out of the ASN "bad" test. */
const NOT_CORE = /^(abusive_asn|seen_in_fraud_network|abuse_ip|blocklisted_.*|allowlisted_.*)$/

/**
 * Whether the event counts as bad for its ASN's fraud rate: its score from its own signals alone (no
 * network-derived and no list checks) reaches the block threshold. A rate that counted blocks could feed
 * itself (abusive_asn producing the blocks that keep it firing) or be made with a blocklist.
 */
export function countsAsBadForAsn(result: EngineResult, blockThreshold: number): boolean {
  let core = 0
  for (const c of result.checks) if (!NOT_CORE.test(c.reason)) core += c.weight
  return Math.min(100, core) >= blockThreshold
}

/**
 * Reads the history this event needs, runs the pure engine and records the event, all in the writer's
 * unit of work so the next event (of this batch or of a concurrent request) sees this one.
 */
function* scoreAndRecord(
  ctx: ScoreCtx,
  counters: GroupCounters,
  p: PreparedEvent,
  now: number,
): Work<Scored> {
  const { store, tenant } = ctx
  const ipAccounts = p.ipHash
    ? yield* store.events.ipAccounts(tenant.id, p.ipHash, now - VELOCITY_WINDOW_MS, p.userId)
    : null
  const ipPrefix = p.ip?.prefix ?? null
  const event = {
    userId: p.userId,
    ipHash: p.ipHash,
    ipPrefix,
    asn: p.ip?.asn ?? null,
    country: p.ip?.country ?? null,
  }
  const dev = yield* deviceHistory(tenant.id, p.device, event, store, now)
  const result = score({
    config: p.config,
    lists: p.lists,
    eventCountry: p.body.event_country?.trim() || null,
    ipCountry: p.body.ip_country?.trim() || null,
    ip: p.ipSignals,
    email: p.emailSignals,
    device: deviceFlags(p),
    timezone: p.timezone,
    history: { ipAccounts, device: dev?.history ?? null },
    network: p.network,
  })
  const id = uuidv7(now)
  const asnBad = countsAsBadForAsn(result, p.config.thresholds.block)
  yield* store.events.insert(
    {
      id,
      tenantId: tenant.id,
      createdMs: now,
      event: p.body.event,
      userId: p.userId,
      deviceId: p.deviceId,
      resolvedDeviceId: dev ? p.device.resolvedId : null,
      emailHash: p.emailHash,
      emailDomain: p.email?.domain ?? null,
      ipHash: p.ipHash,
      ipPrefix,
      asn: event.asn,
      ipCountry: event.country,
      phoneHash: p.phoneHash,
      phoneCountry: p.phoneCountry,
      score: result.score,
      verdict: result.verdict,
      reasons: result.reasons,
      checks: JSON.stringify(result.checks),
    },
    asnBad,
  )
  if (dev) {
    yield* store.devices.insertObservation({
      tenantId: tenant.id,
      eventId: id,
      createdMs: now,
      deviceId: p.deviceId,
      resolvedId: p.device.resolvedId,
      tokenId: p.device.tokenId,
      rung: p.device.rung,
      userId: p.userId,
      ipHash: p.ipHash,
      ipPrefix,
      asn: event.asn,
      country: event.country,
      connectionType: p.device.connection,
      platform: p.device.platform,
      verdict: result.verdict,
    })
  }
  counters.add({
    tenantId: tenant.id,
    createdMs: now,
    verdict: result.verdict,
    score: result.score,
    reasons: result.reasons,
    asn: event.asn,
    asnBad,
  })
  if (!dev) return { id, prepared: p, result }
  const device = deviceProfile(p.device, dev, deviceFlags(p), p.ip, p.timezone?.zone ?? null)
  return { id, prepared: p, result, device }
}

function respond(s: Scored): ScoreResponse {
  const r = s.result
  const out: ScoreResponse = {
    event_id: s.id,
    score: r.score,
    verdict: r.verdict,
    reasons: r.reasons,
    reason_text: templateExplanation(r),
    checks: r.checks,
  }
  const e = s.prepared.email
  if (e)
    out.identity = {
      email_canonical: e.canonical,
      email_is_aliased: e.isAliased,
      email_alias_tricks: e.aliasTricks,
    }
  if (s.device) out.device = s.device
  out.device_token = s.prepared.device.token
  if (s.prepared.warnings.length) out.warnings = s.prepared.warnings
  return out
}

function explanationInput(s: Scored, text: string): ExplanationInput {
  const t = s.prepared.config.thresholds
  const r = s.result
  return {
    verdict: r.verdict,
    score: r.score,
    thresholds: { review: t.review, block: t.block },
    checks: r.checks,
    fallback: text,
  }
}

/** Replaces the templated reason_text with the AI layer's when it answers in time; never touches the verdict. */
async function explain(ctx: ScoreCtx, scored: Scored[], out: ScoreResponse[]): Promise<void> {
  const explanations = await ctx.explainer.explainMany(
    scored.map((s, i) => explanationInput(s, out[i]!.reason_text)),
  )
  explanations.forEach((e, i) => {
    const o = out[i]!
    o.reason_text = e.text
    if (e.warning) o.warnings = [...(o.warnings ?? []), e.warning]
  })
}

const NO_LOCKS: string[] = []

/** The entities an event's history is read by: its IP, its fingerprint and its device identity. */
function entityLocks(ctx: ScoreCtx, p: PreparedEvent): string[] {
  // Only PostgreSQL takes them (store/entity-locks.ts); SQLite's write lock serialises everything.
  if (ctx.store.db.dialect !== 'postgres') return NO_LOCKS
  const tenantId = ctx.tenant.id
  const keys: string[] = []
  if (p.ipHash) keys.push(`ip\u0000${tenantId}\u0000${p.ipHash}`)
  if (p.device.observed) {
    if (p.device.fingerprint) keys.push(`fp\u0000${tenantId}\u0000${p.device.fingerprint}`)
    keys.push(`tk\u0000${tenantId}\u0000${p.device.tokenId}`)
  }
  return keys
}

export async function scoreEvent(ctx: ScoreCtx, body: ScoreBody): Promise<ScoreResponse> {
  // An over-quota key is refused before any DNS lookup or preparation.
  await assertQuotaFits(ctx, 1)
  const prepared = await prepareEvent(ctx, body)
  const scored = await ctx.writer.submit(
    function* (counters) {
      const now = ctx.clock.now()
      yield* consumeQuota(ctx, 1, now)
      return yield* scoreAndRecord(ctx, counters, prepared, now)
    },
    entityLocks(ctx, prepared),
  )
  const out = respond(scored)
  await explain(ctx, [scored], [out])
  return out
}

/** Rows are scored and recorded in order in one unit of work: later rows see earlier rows' history. */
export async function scoreBatch(
  ctx: ScoreCtx,
  rows: readonly ScoreBody[],
): Promise<{ results: ScoreResponse[] }> {
  await assertQuotaFits(ctx, rows.length)
  const overrides = await ctx.store.config.cachedOverrides(ctx.tenant.id)
  const prepared = await mapLimit(rows, 32, (row) => prepareEvent(ctx, row, overrides))
  const scored = await ctx.writer.submit(
    function* (counters) {
      const now = ctx.clock.now()
      yield* consumeQuota(ctx, rows.length, now)
      const out: Scored[] = []
      for (const p of prepared) out.push(yield* scoreAndRecord(ctx, counters, p, now))
      return out
    },
    prepared.flatMap((p) => entityLocks(ctx, p)),
  )
  const results = scored.map(respond)
  await explain(ctx, scored, results)
  return { results }
}
