import { performance } from 'node:perf_hooks'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { TenantContext } from '../../context.js'
import { badRequest } from '../../errors.js'
import { score } from '../../scoring/engine.js'
import { RULES_VERSION, replayInput } from '../../scoring/recorded.js'
import type { RuleMode } from '../../scoring/rules/types.js'
import type { ConfigOverrides, ScoringConfig } from '../../scoring/tenant-config.js'
import type { Verdict } from '../../scoring/types.js'
import type { Outcome } from '../../store/rules/rule-performance.js'
import { attributeHash } from './attribute-hash.js'
import { effectiveOf, scoringConfig } from './compile.js'
import { type ConfigPatch, mergedConfig } from './tenant-config.js'

export const SIMULATE_DEFAULT_EVENTS = 10_000
export const SIMULATE_MAX_EVENTS = 100_000
/**
 * Events read per query: memory and the read of one page stay small (on SQLite a read holds the event
 * loop: 500 rows with their recorded inputs measured 13-18 ms on a loaded machine).
 */
const PAGE = 200
/**
 * Events decided between two turns of the event loop at most: each takes tens of microseconds idle,
 * but a busy machine stretched 50 of them to 12-46 ms, so the loop also yields once SIMULATE_SLICE_MS
 * have passed since its last turn. Goal: no other request waits more than about 20 ms behind a
 * simulation (issue 26; measured by bench/heavy-fairness.ts).
 */
export const SIMULATE_YIELD_EVERY = 50
export const SIMULATE_SLICE_MS = 5

export type SimulateRequest = ConfigPatch & { limit?: number; since_ms?: number; until_ms?: number }

type Row = Record<Verdict, number>
export type Transitions = Record<Verdict, Row>

export interface Quality {
  precision: number | null
  recall: number | null
}

export interface Simulation {
  events: number
  changed: number
  /** Events recorded before decisions kept their inputs: they cannot be decided again. */
  skipped: number
  /** The current config version the proposal is compared with. */
  config_version: number
  transitions: Transitions
  labelled: {
    events: number
    fraud: number
    legit: number
    before: { block: Quality; review: Quality }
    after: { block: Quality; review: Quality }
  }
  /** Each tenant rule of the proposal and on how many events its condition held (only with rules). */
  rules?: { id: string; mode: RuleMode; fired: number }[]
}

const emptyTransitions = (): Transitions => ({
  allow: { allow: 0, review: 0, block: 0 },
  review: { allow: 0, review: 0, block: 0 },
  block: { allow: 0, review: 0, block: 0 },
})

interface Labelled {
  before: Verdict
  after: Verdict
  outcome: Outcome
}

/** Precision and recall of one verdict taken as "this is fraud", over the labelled events. */
export function quality(labelled: readonly Labelled[], side: 'before' | 'after', verdict: Verdict): Quality {
  let flagged = 0
  let caught = 0
  let fraud = 0
  for (const l of labelled) {
    if (l.outcome === 'fraud') fraud++
    if (l[side] !== verdict) continue
    flagged++
    if (l.outcome === 'fraud') caught++
  }
  return { precision: flagged ? caught / flagged : null, recall: fraud ? caught / fraud : null }
}

function window(
  ctx: TenantContext,
  req: SimulateRequest,
): { sinceMs: number; untilMs: number; limit: number } {
  const windowed = req.since_ms !== undefined || req.until_ms !== undefined
  // Half-open, as GET /v1/events takes it: [since_ms, until_ms).
  const untilMs = req.until_ms ?? ctx.clock.now() + 1
  const sinceMs = req.since_ms ?? Number.MIN_SAFE_INTEGER
  if (sinceMs > untilMs) throw badRequest('body.since_ms must not be after body.until_ms')
  // A window without a count takes every event in it, up to the maximum.
  const limit = req.limit ?? (windowed ? SIMULATE_MAX_EVENTS : SIMULATE_DEFAULT_EVENTS)
  return { sinceMs, untilMs, limit }
}

/**
 * Decides the tenant's recent events again under a proposed change (merged onto the current overrides,
 * validated as PUT /v1/config validates it) and compares with the current configuration. Writes nothing.
 */
export async function simulateConfig(
  ctx: TenantContext,
  req: SimulateRequest,
  pageSize = PAGE,
): Promise<Simulation> {
  // One simulation per tenant at once and a budget of events per minute, charged at the bound asked.
  const { limit } = window(ctx, req)
  return ctx.tenantWork.simulation(ctx.tenant.id, limit, ctx.clock.now(), () => simulate(ctx, req, pageSize))
}

async function simulate(ctx: TenantContext, req: SimulateRequest, pageSize: number): Promise<Simulation> {
  const tenantId = ctx.tenant.id
  const current = await ctx.store.config.current(tenantId)
  const hash = attributeHash(ctx.hasher, tenantId)
  const proposed = mergedConfig(current.overrides, req, hash)
  const currentConfig: ScoringConfig = scoringConfig(effectiveOf(current.overrides as ConfigOverrides), hash)
  const { sinceMs, untilMs, limit } = window(ctx, req)

  const transitions = emptyTransitions()
  const labelled: Labelled[] = []
  const fired = new Map((proposed.rules ?? []).map((r) => [r.spec.id, 0]))
  let events = 0
  let changed = 0
  let skipped = 0
  let beforeMs = untilMs
  // A turn of the event loop between every read and after every slice of work: on SQLite a read runs
  // on the loop, and consecutive awaits of settled promises would otherwise run as one stretch.
  let sliceStart = performance.now()
  const turn = async () => {
    await nextTurn()
    sliceStart = performance.now()
  }
  while (events + skipped < limit) {
    const rows = await ctx.store.decisions.page(tenantId, sinceMs, beforeMs, pageSize)
    if (rows.length === 0) break
    await turn()
    const oldest = rows[rows.length - 1]!.createdMs
    // A full page may end inside a millisecond (a batch shares one): take that millisecond whole, its
    // ids first and its rows a page at a time, so no read holds more than a page of recorded inputs.
    const page = rows.length < pageSize ? rows : rows.filter((r) => r.createdMs > oldest)
    if (rows.length === pageSize) {
      const ids = await ctx.store.decisions.idsAt(tenantId, oldest)
      for (let i = 0; i < ids.length; i += pageSize) {
        await turn()
        page.push(...(await ctx.store.decisions.byIds(tenantId, oldest, ids.slice(i, i + pageSize))))
      }
      await turn()
    }
    const outcomes = await ctx.store.decisions.outcomes(tenantId, oldest, rows[0]!.createdMs)
    await turn()
    for (const r of page) {
      if (events + skipped >= limit) break
      if (r.inputs === null) {
        skipped++
        continue
      }
      const input = r.inputs
      // Decided under today's config and rules, its recorded verdict is what the current config gives.
      const before =
        r.configVersion === current.version && r.rulesVersion === RULES_VERSION
          ? (r.verdict as Verdict)
          : score(replayInput(input, currentConfig)).verdict
      const decided = score(replayInput(input, proposed))
      const after = decided.verdict
      if (fired.size > 0) {
        for (const c of decided.checks)
          if (c.check === 'custom') fired.set(c.key, (fired.get(c.key) ?? 0) + 1)
        for (const id of decided.shadow ?? []) fired.set(id, (fired.get(id) ?? 0) + 1)
      }
      events++
      if (events % SIMULATE_YIELD_EVERY === 0 || performance.now() - sliceStart >= SIMULATE_SLICE_MS)
        await turn()
      transitions[before][after]++
      if (before !== after) changed++
      const outcome = outcomes.get(r.id)
      if (outcome) labelled.push({ before, after, outcome })
    }
    beforeMs = oldest
  }
  const fraud = labelled.filter((l) => l.outcome === 'fraud').length
  const side = (s: 'before' | 'after') => ({
    block: quality(labelled, s, 'block'),
    review: quality(labelled, s, 'review'),
  })
  return {
    events,
    changed,
    skipped,
    config_version: current.version,
    transitions,
    labelled: {
      events: labelled.length,
      fraud,
      legit: labelled.length - fraud,
      before: side('before'),
      after: side('after'),
    },
    ...(proposed.rules?.length
      ? {
          rules: proposed.rules.map((r) => ({
            id: r.spec.id,
            mode: r.spec.mode,
            fired: fired.get(r.spec.id) ?? 0,
          })),
        }
      : {}),
  }
}
