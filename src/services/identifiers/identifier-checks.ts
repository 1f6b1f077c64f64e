import { hasTenant, type RequestContext, type TenantContext } from '../../context.js'
import { badRequest } from '../../errors.js'
import type { EmailResult } from '../../scoring/identifiers/email.js'
import type { IpResult } from '../../scoring/identifiers/ip.js'
import type { PhoneResult } from '../../scoring/identifiers/phone.js'
import type { Reputation } from '../../scoring/network-signals.js'
import type { LookupRecord } from '../../store/events/lookups.js'
import type { CheckedKind } from '../../util/entities.js'
import { mapLimit } from '../../util/pool.js'
import { consumeQuota } from '../access/quota.js'
import { assertQuotaFits } from '../access/quota-check.js'
import { type Evaluated, evaluateEmail, evaluateIp, evaluatePhone } from './evaluate.js'

type AnyEvaluated = Evaluated<{ fraud_score: number }>

/** DNS-bound work of a batch runs at most this many at a time. */
const BATCH_CONCURRENCY = 32

export type CheckView<K extends CheckedKind, R> = { [k in K]: R } & {
  reputation: Reputation
  summary: string
  warnings?: string[]
}

export function view<R, K extends CheckedKind>(e: Evaluated<R, K>): CheckView<K, R> {
  const out = { [e.kind]: e.result, reputation: e.reputation, summary: e.summary } as unknown as CheckView<
    K,
    R
  >
  if (e.warnings.length) out.warnings = e.warnings
  return out
}

/**
 * Records the checks in the lookup history and meters them, in one transaction: all or nothing. The
 * meter comes last, so the tenant's usage row is locked only from there to COMMIT; a refusal there
 * rolls the recorded lookups back.
 */
async function record(ctx: TenantContext, evaluated: readonly AnyEvaluated[]): Promise<void> {
  const now = ctx.clock.now()
  const { store } = ctx
  await store.db.tx(function* () {
    yield* store.lookups.add(
      ctx.tenant.id,
      evaluated.map((e) => ({
        kind: e.kind,
        valueHash: e.valueHash,
        hint: e.hint,
        fraudScore: e.result.fraud_score,
        createdMs: now,
      })),
    )
    yield* consumeQuota(ctx, evaluated.length, now)
  })
}

type Evaluator<I, R, K extends CheckedKind> = (ctx: RequestContext, input: I) => Promise<Evaluated<R, K>>

export const emailCheck: Evaluator<{ email: string }, EmailResult, 'email'> = (d, i) =>
  evaluateEmail(d, i.email)
export const ipCheck: Evaluator<{ ip: string }, IpResult, 'ip'> = (d, i) => evaluateIp(d, i.ip)
export const phoneCheck: Evaluator<{ phone: string; country?: string }, PhoneResult, 'phone'> = (d, i) =>
  evaluatePhone(d, i.phone, i.country)

export async function checkOne<I, R extends { fraud_score: number }, K extends CheckedKind>(
  ctx: TenantContext,
  evaluator: Evaluator<I, R, K>,
  input: I,
): Promise<CheckView<K, R>> {
  await assertQuotaFits(ctx, 1)
  const e = await evaluator(ctx, input)
  await record(ctx, [e])
  return view(e)
}

export async function checkBatch<I, R extends { fraud_score: number }, K extends CheckedKind>(
  ctx: TenantContext,
  evaluator: Evaluator<I, R, K>,
  inputs: readonly I[],
): Promise<{ results: CheckView<K, R>[] }> {
  await assertQuotaFits(ctx, inputs.length)
  const evaluated = await mapLimit(inputs, BATCH_CONCURRENCY, (input) => evaluator(ctx, input))
  await record(ctx, evaluated)
  return { results: evaluated.map((e) => view(e)) }
}

/**
 * POST /v1/check: email and/or IP. Without a key it is neither metered nor recorded; with a valid key
 * it is metered (one unit per identifier) and appears in the lookup history.
 */
export interface CombinedView {
  email?: EmailResult
  ip?: IpResult
  reputation: { email?: Reputation; ip?: Reputation }
  summary: string
  warnings?: string[]
}

export async function checkCombined(
  ctx: RequestContext,
  body: { email?: string; ip?: string },
): Promise<CombinedView> {
  const units = (body.email !== undefined ? 1 : 0) + (body.ip !== undefined ? 1 : 0)
  if (units === 0) throw badRequest('body must contain email, ip or both')
  if (hasTenant(ctx)) await assertQuotaFits(ctx, units)
  const jobs: Promise<AnyEvaluated>[] = []
  if (body.email !== undefined) jobs.push(evaluateEmail(ctx, body.email))
  if (body.ip !== undefined) jobs.push(evaluateIp(ctx, body.ip))
  const evaluated = await Promise.all(jobs)
  if (hasTenant(ctx)) await record(ctx, evaluated)
  const out: CombinedView = {
    reputation: {},
    summary: evaluated.map((e) => `${e.kind === 'ip' ? 'IP' : 'Email'}: ${e.summary}`).join(' '),
  }
  const warnings = evaluated.flatMap((e) => e.warnings)
  for (const e of evaluated) {
    if (e.kind === 'email') out.email = e.result as EmailResult
    if (e.kind === 'ip') out.ip = e.result as IpResult
    out.reputation[e.kind as 'email' | 'ip'] = e.reputation
  }
  if (warnings.length) out.warnings = warnings
  return out
}

/** A recorded check as listings show it: masked hint and hash only. */
export const lookupView = (l: LookupRecord) => ({
  id: String(l.id),
  kind: l.kind,
  hint: l.hint,
  valueHash: l.valueHash,
  fraudScore: l.fraudScore,
  createdMs: l.createdMs,
})

export async function listLookups(
  ctx: TenantContext,
  opts: { limit: number; offset: number; kind?: CheckedKind },
) {
  const { lookups, total } = await ctx.store.lookups.list(ctx.tenant.id, opts)
  return {
    lookups: lookups.map(lookupView),
    total,
    limit: opts.limit,
    offset: opts.offset,
  }
}
