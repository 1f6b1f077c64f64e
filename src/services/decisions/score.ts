import type { ExplanationInput } from '../../ai/index.js'
import type { TenantContext } from '../../context.js'
import type { ScoreResponse } from '../../schemas/score.js'
import { WAVE_DAYS, WAVE_HOURS } from '../../scoring/checks/account.js'
import { VELOCITY_WINDOW_MS } from '../../scoring/checks/velocity.js'
import { score } from '../../scoring/engine.js'
import { templateExplanation } from '../../scoring/explain.js'
import { OUTSIDE_SIGNAL_CODES } from '../../scoring/reasons.js'
import { RULES_VERSION, recordInput } from '../../scoring/recorded.js'
import type { AttributeCounts } from '../../scoring/rules/facts.js'
import type { AccountHistory, EngineInput, EngineResult, GeneratedMailboxes } from '../../scoring/types.js'
import { blind, none, together, type Work } from '../../store/engine/db.js'
import { overlapped } from '../../store/engine/overlap.js'
import { type GroupCounters, HOUR_MS } from '../../store/events/aggregates.js'
import type { GroupMeter } from '../../store/events/group-meter.js'
import { type ScoredEvent, velocityKey } from '../../store/events/scored-event.js'
import { mapLimit } from '../../util/pool.js'
import { uuidv7 } from '../../util/uuid.js'
import { consumeQuota } from '../access/quota.js'
import { assertQuotaFits } from '../access/quota-check.js'
import { deviceHistory, linkWithinBatch, withMailboxAccounts } from '../devices/device.js'
import { type Idem, NO_IDEM } from '../runtime/idempotency.js'
import { emit, type WebhookEventType } from '../webhooks/events.js'
import { deviceProfile } from './device-profile.js'
import type { CountedValue } from './rule-facts.js'
import { type PreparedEvent, prepareEvent, type ScoreBody } from './score-inputs.js'

interface Scored {
  event: ScoredEvent
  prepared: PreparedEvent
  /** The device profile, when the event carried a fingerprint or a device token. */
  device?: ScoreResponse['device']
  /** Webhook deliveries the event queued (a review or block verdict with subscribed endpoints). */
  queued: number
}

/**
 * Whether the event counts as bad for its ASN's fraud rate: its score from its own signals alone (no
 * network-derived and no list checks) reaches the block threshold. A rate that counted blocks could feed
 * itself (abusive_asn producing the blocks that keep it firing) or be made with a blocklist.
 */
export function countsAsBadForAsn(result: EngineResult, blockThreshold: number): boolean {
  let core = 0
  for (const c of result.checks) if (!OUTSIDE_SIGNAL_CODES.has(c.reason)) core += c.weight
  return Math.min(100, core) >= blockThreshold
}

/** Events that create an account have no account history to compare with. */
const ACCOUNT_CREATING = new Set(['signup', 'sign_up', 'register', 'registration', 'account_created'])
const createsAccount = (a: PreparedEvent['attributes']) => ACCOUNT_CREATING.has(a.event.trim().toLowerCase())

/** The account's earlier events as takeover reads them; null for signups and events without an account. */
function* accountHistory(
  ctx: TenantContext,
  a: PreparedEvent['attributes'],
  now: number,
): Work<AccountHistory | null> {
  if (a.userId === null || createsAccount(a)) return null
  const h = yield* ctx.store.events.accountHistory(
    a.tenantId,
    a.userId,
    { fingerprint: a.deviceId, resolvedId: a.device?.resolvedId ?? null },
    a.ipCountry,
  )
  if (h.firstMs === null) return null
  return {
    events: h.events,
    firstMs: h.firstMs,
    nowMs: now,
    deviceSeen: a.deviceId === null && a.device === null ? null : h.deviceSeen,
    countrySeen: a.ipCountry === null ? null : h.countrySeen,
  }
}

/** A sign-up whose mailbox looks machine-generated reads the tenant's recent statistics (`gibberish_wave`). */
const readsWave = (p: PreparedEvent) =>
  p.email?.signals?.looksGibberish === true && createsAccount(p.attributes)

/**
 * For a sign-up whose mailbox looks machine-generated, the tenant's recent events with such mailboxes
 * (`gibberish_wave`, docs/scoring.md): the statistics' counts of `gibberish_email` and of all events in
 * the current clock hour and the WAVE_HOURS - 1 before (plus this event), and in the same clock hours of
 * each of the WAVE_DAYS days before. Null otherwise, so other events read nothing.
 */
function* generatedMailboxes(
  ctx: TenantContext,
  counters: GroupCounters,
  p: PreparedEvent,
  now: number,
): Work<GeneratedMailboxes | null> {
  const a = p.attributes
  if (!readsWave(p)) return null
  const from = (Math.floor(now / HOUR_MS) - (WAVE_HOURS - 1)) * HOUR_MS
  const c = yield* ctx.store.events.reasonHours(a.tenantId, 'gibberish_email', from, WAVE_HOURS, WAVE_DAYS)
  // The statistics are written at the group's end: the group's earlier events are still in memory.
  const pending = counters.pending(a.tenantId, 'gibberish_email', from, from + WAVE_HOURS * HOUR_MS)
  return {
    recent: c.recent.fired + pending.fired + 1,
    recentEvents: c.recent.events + pending.events + 1,
    sameHours: c.sameHours.map((h) => h.fired),
    sameHoursEvents: c.sameHours.map((h) => h.events),
  }
}

/**
 * Reads the history this event needs, runs the pure engine and records the event, all in the writer's
 * unit of work so the next event (of this batch or of a concurrent request) sees this one. `first` (the
 * request's idempotency claim and quota check) runs in the same batches as the reads: it reads and
 * writes nothing they do, and when it refuses, only reads have been made.
 */
function* scoreAndRecord(
  ctx: TenantContext,
  counters: GroupCounters,
  p: PreparedEvent,
  now: number,
  subscribed: ReadonlySet<string>,
  first: Work<void> = none(),
): Work<Scored> {
  const a = p.attributes
  const ipKey = velocityKey(a)
  // The event's reads do not depend on each other: one batch (one statement on PostgreSQL).
  // A fingerprint linked at rung 1 or 2 also counts its accounts on the event's mailbox (device reuse).
  const linkedFingerprint = a.device && a.device.rung !== 3 ? a.deviceId : null
  const [, ipAccounts, dev, mailbox, account, generated] = yield* together(
    first,
    ipKey ? ctx.store.events.ipAccounts(a.tenantId, ipKey, now - VELOCITY_WINDOW_MS, a.userId) : none(null),
    deviceHistory(ctx, a, now),
    a.emailHash && a.userId
      ? ctx.store.events.mailboxAccounts(a.tenantId, a.emailHash, a.userId, linkedFingerprint)
      : none(null),
    accountHistory(ctx, a, now),
    generatedMailboxes(ctx, counters, p, now),
  )
  const mailboxAccounts = mailbox?.accounts ?? null
  // Counted attributes (a tenant declares at most 5, a list counts each of its strings): their reads
  // are one more batch. A list's counts are, figure by figure, the largest of its strings'.
  const read = yield* together<AttributeCounts[]>(
    ...p.counted.map((c) => ctx.store.attributeCounts.read(a.tenantId, c.key, c.valueHash, a.userId, now)),
  )
  const counts: Record<string, AttributeCounts> = {}
  p.counted.forEach((c, i) => {
    counts[c.key] = largest(counts[c.key], read[i]!)
  })
  const input: EngineInput = {
    config: p.config,
    lists: p.lists,
    eventCountry: p.body.event_country?.trim() || null,
    ipCountry: p.body.ip_country?.trim() || null,
    ip: p.ip?.signals ?? null,
    email: p.email?.signals ?? null,
    device: p.deviceFlags,
    timezone: p.timezone,
    history: {
      ipAccounts,
      device: dev ? withMailboxAccounts(dev.history, mailbox?.onFingerprint ?? null) : null,
      mailboxAccounts,
      account,
      ...(generated ? { generatedMailboxes: generated } : {}),
      ...(p.counted.length > 0 ? { attributes: counts } : {}),
    },
    network: p.network,
    tls: p.tls,
    facts: p.facts,
  }
  const result = score(input)
  const event: ScoredEvent = {
    id: uuidv7(now),
    createdMs: now,
    attributes: a,
    result,
    decidedBy: { configVersion: p.configVersion, rulesVersion: RULES_VERSION, input: recordInput(input) },
    asnBad: countsAsBadForAsn(result, p.config.thresholds.block),
  }
  // And so do its writes (each to tables of its own): a second batch. Nothing is read from them unless a
  // decision message is queued (the outbox counts its deliveries first): otherwise they are blind, and on
  // PostgreSQL go out with the next statement that reads (a lone event's: its group's end).
  const writes = together(
    ctx.store.events.insert(event),
    ctx.store.devices.insertObservation(event),
    emitDecision(ctx, event, subscribed),
    dev ? dev.write : none(),
  )
  const [, , queued] = yield* decisionType(event, subscribed) === null ? blind(writes) : writes
  // One at a time, in one fixed order (by attribute, then value): rows other nodes may upsert too must
  // lock in the same order everywhere (PostgreSQL does not promise the order of a batched statement's
  // parts, and requests list attributes in any order).
  for (const c of [...p.counted].sort(byKeyAndValue))
    yield* ctx.store.attributeCounts.record(a.tenantId, c.key, c.valueHash, a.userId, now)
  counters.add(event)
  if (!dev) return { event, prepared: p, queued }
  return { event, prepared: p, device: deviceProfile(p, dev), queued }
}

/** Figure by figure, the larger of two counts (a list attribute reads as its most shared string). */
function largest(a: AttributeCounts | undefined, b: AttributeCounts): AttributeCounts {
  if (!a) return b
  const out = { ...a }
  for (const k of Object.keys(b) as (keyof AttributeCounts)[]) out[k] = Math.max(a[k], b[k])
  return out
}

const byKeyAndValue = (x: CountedValue, y: CountedValue) =>
  x.key < y.key ? -1 : x.key > y.key ? 1 : x.valueHash < y.valueHash ? -1 : x.valueHash > y.valueHash ? 1 : 0

/** The decision message the event queues for the tenant's subscribed endpoints, if any. */
function decisionType(e: ScoredEvent, subscribed: ReadonlySet<string>): WebhookEventType | null {
  const verdict = e.result.verdict
  if (verdict !== 'review' && verdict !== 'block') return null
  const type = verdict === 'review' ? 'decision.review' : 'decision.block'
  return subscribed.has(type) ? type : null
}

/**
 * The `decision.review` / `decision.block` message, in the event's own transaction (the outbox). Only
 * when one of the tenant's endpoints subscribes to it (`subscribed`, the types read from memory before
 * the transaction); the outbox's statement then decides, from the endpoints as they are, which deliveries
 * to record.
 */
function* emitDecision(ctx: TenantContext, e: ScoredEvent, subscribed: ReadonlySet<string>): Work<number> {
  const type = decisionType(e, subscribed)
  if (type === null) return 0
  const verdict = e.result.verdict
  const a = e.attributes
  return yield* emit(
    ctx.store.webhookOutbox,
    a.tenantId,
    e.createdMs,
    type,
    {
      event_id: e.id,
      event: a.event,
      user_id: a.userId,
      verdict,
      score: e.result.score,
      reasons: e.result.reasons,
      config_version: e.decidedBy.configVersion,
    },
    { eventId: e.id, userId: a.userId, emailHash: a.emailHash, ipHash: a.ipHash, deviceId: a.deviceId },
  )
}

function respond(s: Scored): ScoreResponse {
  const r = s.event.result
  const out: ScoreResponse = {
    event_id: s.event.id,
    score: r.score,
    verdict: r.verdict,
    reasons: r.reasons,
    reason_text: templateExplanation(r),
    checks: r.checks,
  }
  const e = s.prepared.email?.analysis
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
  const r = s.event.result
  return {
    verdict: r.verdict,
    score: r.score,
    thresholds: { review: t.review, block: t.block },
    checks: r.checks,
    fallback: text,
  }
}

/** Replaces the templated reason_text with the AI layer's when it answers in time; never touches the verdict. */
async function explain(ctx: TenantContext, scored: Scored[], out: ScoreResponse[]): Promise<void> {
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

/** The entities an event's history is read by, of its tenant: its IP, its fingerprint and its device identity. */
function entities(tenantId: string, p: PreparedEvent): string[] {
  const keys: string[] = []
  const ipHash = p.attributes.ipHash
  if (ipHash) keys.push(`ip\u0000${tenantId}\u0000${ipHash}`)
  if (p.device.observed) {
    if (p.device.fingerprint) keys.push(`fp\u0000${tenantId}\u0000${p.device.fingerprint}`)
    keys.push(`tk\u0000${tenantId}\u0000${p.device.resolvedId}`)
  }
  return keys
}

/** Those entities as locks across nodes (store/engine/entity-locks.ts). */
function entityLocks(ctx: TenantContext, p: PreparedEvent): string[] {
  // Only PostgreSQL takes them; SQLite's write lock serialises everything.
  return ctx.store.db.dialect === 'postgres' ? entities(ctx.tenant.id, p) : NO_LOCKS
}

/**
 * What an event's history reads and its record writes, by entity: its IP, fingerprint and device
 * identity (`entities`), its velocity key, its account and its mailbox. Two events with none in common
 * read nothing the other writes (store/engine/overlap.ts). The rest of what an event reads is written
 * only at the group's end (statistics, which the group's own events add to from memory) or before the
 * transaction. Null (alone) for an event with counted attributes (their rows are upserted one at a time
 * in a fixed order, which a batch would not keep) and for one that reads the tenant's statistics.
 */
function historyKeys(tenantId: string, p: PreparedEvent): string[] | null {
  // A wave's count is the tenant's: every event of the group before it must have been counted.
  if (p.counted.length > 0 || readsWave(p)) return null
  const a = p.attributes
  const keys = entities(tenantId, p)
  const ipKey = velocityKey(a)
  if (ipKey) keys.push(`vk\u0000${tenantId}\u0000${ipKey}`)
  if (a.userId) keys.push(`us\u0000${tenantId}\u0000${a.userId}`)
  if (a.emailHash) keys.push(`em\u0000${tenantId}\u0000${a.emailHash}`)
  return keys
}

/** Claims the idempotency key, then meters: a refusal of either leaves nothing in the group. */
function* claimAndMeter(ctx: TenantContext, idem: Idem, units: number, now: number, meter: GroupMeter) {
  yield* idem.claim(now)
  try {
    yield* consumeQuota(ctx, units, now, meter)
  } catch (err) {
    yield* idem.release()
    throw err
  }
}

export async function scoreEvent(
  ctx: TenantContext,
  body: ScoreBody,
  idem: Idem = NO_IDEM,
): Promise<ScoreResponse> {
  // An over-quota key is refused before any DNS lookup or preparation.
  await assertQuotaFits(ctx, 1)
  const prepared = await ctx.signals.span('identifiers.analyze', () => prepareEvent(ctx, body))
  const subscribed = await ctx.store.webhookEndpoints.subscribedTypes(ctx.tenant.id)
  const { scored, out } = await ctx.writer.submit(
    function* (counters, meter) {
      const now = ctx.clock.now()
      const claim = claimAndMeter(ctx, idem, 1, now, meter)
      const s = yield* scoreAndRecord(ctx, counters, prepared, now, subscribed, claim)
      const response = respond(s)
      // The response is recorded with the event: a retry after a crash gets it, never a second event.
      yield* idem.complete(response)
      return { scored: s, out: response }
    },
    entityLocks(ctx, prepared),
    // A request with an idempotency key runs alone: its claim is a row another request may share.
    idem === NO_IDEM ? historyKeys(ctx.tenant.id, prepared) : null,
  )
  ctx.signals.scored(scored.event.result.verdict, scored.event.result.reasons, ctx.tenant.id)
  if (scored.queued > 0) ctx.webhooks.nudge()
  await explain(ctx, [scored], [out])
  return out
}

/** Rows are scored and recorded in order in one unit of work: later rows see earlier rows' history. */
export async function scoreBatch(
  ctx: TenantContext,
  rows: readonly ScoreBody[],
  idem: Idem = NO_IDEM,
): Promise<{ results: ScoreResponse[] }> {
  await assertQuotaFits(ctx, rows.length)
  const config = await ctx.store.config.cached(ctx.tenant.id)
  const prepared = await ctx.signals.span('identifiers.analyze', () =>
    mapLimit(rows, 32, (row) => prepareEvent(ctx, row, config)),
  )
  linkWithinBatch(
    ctx,
    prepared.map((p) => p.device),
  )
  const subscribed = await ctx.store.webhookEndpoints.subscribedTypes(ctx.tenant.id)
  const { scored, results } = await ctx.writer.submit(
    function* (counters, meter) {
      const now = ctx.clock.now()
      yield* claimAndMeter(ctx, idem, rows.length, now, meter)
      // In order; a row that shares no entity with the running ones is decided beside them (on PostgreSQL).
      const out = yield* overlapped(
        prepared,
        (p) => historyKeys(ctx.tenant.id, p),
        (p) => scoreAndRecord(ctx, counters, p, now, subscribed),
      )
      const answer = { results: out.map(respond) }
      yield* idem.complete(answer)
      return { scored: out, results: answer.results }
    },
    prepared.flatMap((p) => entityLocks(ctx, p)),
  )
  for (const s of scored) ctx.signals.scored(s.event.result.verdict, s.event.result.reasons, ctx.tenant.id)
  if (scored.some((s) => s.queued > 0)) ctx.webhooks.nudge()
  await explain(ctx, scored, results)
  return { results }
}
