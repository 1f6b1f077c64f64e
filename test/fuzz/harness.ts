import { expect } from 'vitest'
import { BEACON_BODY_LIMIT, CHECK_BODY_LIMIT } from '../../src/plugins/json-body.js'
import { issueKey } from '../../src/services/access/tenants.js'
import { build, type Engine, type Harness } from '../helpers/build.js'
import { BEACON, type Operation, operationsOf, SERVICE_REFUSALS } from './operations.js'

/** Runs and seed: fixed in CI, overridden with FUZZ_RUNS / FUZZ_SEED (see docs/reliability.md). */
export const FUZZ_RUNS = Number(process.env['FUZZ_RUNS'] ?? 2000)
export const FUZZ_SEED = Number(process.env['FUZZ_SEED'] ?? 20261123)
/** Fewer on PostgreSQL (a round trip per statement): the same properties, as a second opinion. */
export const FUZZ_PG_RUNS = Number(process.env['FUZZ_PG_RUNS'] ?? 500)

export const ORIGIN = 'https://shop.example'
const LOTS = 1_000_000_000

/** One request as app.inject takes it; the body is always text, so anything can be sent. */
export interface FuzzRequest {
  method: Operation['method']
  url: string
  headers: Record<string, string>
  payload?: string
}

/** What the answer must be: a valid request, an invalid one (refused, naming `field`), or only "not a 5xx". */
export type Expectation =
  | { kind: 'valid' }
  | { kind: 'invalid'; field: string | RegExp; how: string; statuses?: number[] }
  | { kind: 'any'; how: string }

export interface FuzzCase {
  req: FuzzRequest
  expect: Expectation
}

export interface FuzzApp {
  h: Harness
  operations: Operation[]
  /** Headers that authenticate for an operation (a secret key, or a publishable key with its Origin). */
  auth(op: Operation): Record<string, string>
  tables: string[]
  /** Per operation: cases by expectation and status, and where the time went (printed by the tests). */
  tally: Record<string, { cases: Record<string, number>; injectMs: number; countMs: number }>
  close(): Promise<void>
}

/** The real app with one tenant whose rate limit and quota are too large to matter. */
export async function openFuzzApp(engine: Engine = 'sqlite'): Promise<FuzzApp> {
  // Webhook hosts never resolve here: a generated URL is refused without asking real DNS.
  const noDns = async () => {
    throw Object.assign(new Error('no DNS in the fuzz app'), { code: 'ENOTFOUND' })
  }
  const h = await build({
    engine,
    keylessRateLimit: LOTS,
    authFailureLimit: LOTS,
    webhooks: { allowHttp: false, allowPrivate: false, resolve: noDns },
    // Thousands of simulations in a minute of test time: the per-tenant budget is not under test here.
    tenantLimits: { simulatedEventsPerMinute: LOTS * 1000 },
  })
  const t = await h.tenant({ rateLimit: LOTS, monthlyQuota: LOTS })
  const pk = await issueKey(h.store, h.clock, t.tenantId, { publishable: { origins: [ORIGIN] } })
  const doc = (await h.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
  const operations = [...operationsOf(doc), BEACON]
  const tables = (
    engine === 'sqlite'
      ? await h.store.db.all<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
        )
      : await h.store.db.all<{ name: string }>(
          `SELECT table_name AS name FROM information_schema.tables
            WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
        )
  ).map((r) => r.name)
  return {
    h,
    operations,
    tables,
    tally: {},
    auth(op): Record<string, string> {
      if (op.auth === 'publishable') return { 'x-api-key': pk.apiKey, origin: ORIGIN }
      if (op.auth === 'none') return {}
      return t.headers
    },
    close: () => h.close(),
  }
}

/** Row count of every table, in one statement (one round trip on PostgreSQL). */
export async function rowCounts(f: FuzzApp): Promise<Record<string, number>> {
  const cols = f.tables.map((t, i) => `(SELECT count(*) FROM "${t}") AS c${i}`).join(', ')
  const [row] = await f.h.store.db.all<Record<string, number | string>>(`SELECT ${cols}`)
  const out: Record<string, number> = {}
  f.tables.forEach((t, i) => {
    out[t] = Number(row?.[`c${i}`] ?? 0)
  })
  return out
}

const show = (c: FuzzCase) =>
  `${c.req.method} ${c.req.url.slice(0, 300)} ${JSON.stringify(c.req.headers)} ${(c.req.payload ?? '').slice(0, 600)}`

/**
 * The properties, for one case: never a 5xx, every error in the documented shape; an invalid request
 * is refused with 400 (or its stated status) naming the field, and writes nothing; a valid one gets
 * only a documented non-error status (or a refusal the service documents, naming the field).
 */
export async function checkCase(f: FuzzApp, op: Operation, c: FuzzCase): Promise<void> {
  const t0 = performance.now()
  const before = c.expect.kind === 'invalid' ? await rowCounts(f) : null
  const t1 = performance.now()
  const res = await f.h.app.inject({
    method: c.req.method,
    url: c.req.url,
    headers: c.req.headers,
    ...(c.req.payload !== undefined ? { payload: c.req.payload } : {}),
    remoteAddress: '73.162.10.20',
  })
  const t2 = performance.now()
  const tally = f.tally[op.id] ?? { cases: {}, injectMs: 0, countMs: 0 }
  f.tally[op.id] = tally
  const key = `${c.expect.kind} ${res.statusCode}`
  tally.cases[key] = (tally.cases[key] ?? 0) + 1
  tally.injectMs += t2 - t1
  tally.countMs += t1 - t0
  const where = `${show(c)}\n→ ${res.statusCode} ${res.body.slice(0, 400)}`
  expect(res.statusCode, `5xx: ${where}`).toBeLessThan(500)
  let body: { error?: unknown; code?: unknown; request_id?: unknown } = {}
  if (res.statusCode >= 400) {
    body = res.json()
    expect(typeof body.error, `error body: ${where}`).toBe('string')
    expect(typeof body.code, `error body: ${where}`).toBe('string')
    expect(typeof body.request_id, `error body: ${where}`).toBe('string')
  }
  const error = String(body.error ?? '')
  if (c.expect.kind === 'valid') {
    if (res.statusCode === 400) {
      const allowed = (SERVICE_REFUSALS[op.id] ?? []).concat(/^query\.\w+ must be at (least|most) \d+$/)
      expect(
        allowed.some((re) => re.test(error)),
        `schema-valid request refused: ${where}`,
      ).toBe(true)
    } else {
      expect(op.validStatuses, `valid request, undocumented status: ${where}`).toContain(res.statusCode)
    }
  } else if (c.expect.kind === 'invalid') {
    // Keyless routes take small bodies (docs/security.md: 4 KB for /v1/check and sign-in, 8 KB for the
    // beacon): a larger invalid body is refused as too large before it is read.
    const small = SMALL_BODY_LIMITS[op.id]
    const tooLarge = small !== undefined && Buffer.byteLength(c.req.payload ?? '') > small
    const statuses = tooLarge ? [413] : (c.expect.statuses ?? [400])
    expect(statuses, `invalid (${c.expect.how}) not refused: ${where}`).toContain(res.statusCode)
    if (res.statusCode === 400) {
      const field = c.expect.field
      const names = typeof field === 'string' ? error.includes(field) : field.test(error)
      expect(names, `400 does not name ${String(field)} (${c.expect.how}): ${where}`).toBe(true)
    }
    const t3 = performance.now()
    expect(await rowCounts(f), `refused request wrote rows: ${where}`).toEqual(before)
    tally.countMs += performance.now() - t3
  }
}

/**
 * Valid requests that cannot succeed by chance: the generated id names nothing stored, so the document's
 * 404 is the right answer for every one of them.
 */
/** Routes with a body limit below the deployment's, in bytes (src/plugins/json-body.ts). */
const SMALL_BODY_LIMITS: Record<string, number> = {
  'POST /v1/check': CHECK_BODY_LIMIT,
  'POST /v1/beacon': BEACON_BODY_LIMIT,
}

/** Operations whose per-tenant cap a long fuzz run reaches (then 409). */
const CAPPED: Record<string, string> = {
  'POST /v1/webhooks': 'a tenant holds a bounded number of endpoints',
}

const NOT_FOUND_BY_DESIGN: Record<string, string> = {
  'POST /v1/replay': 'a generated event_id names no recorded event',
  'GET /v1/events/{id}': 'a generated id names no recorded event',
  'DELETE /v1/lists/{id}': 'a generated id names an entry only by chance',
  'DELETE /v1/labels/{id}': 'a generated id names a label only by chance',
  'GET /v1/webhooks/{webhookId}': 'a generated id names no endpoint',
  'PATCH /v1/webhooks/{webhookId}': 'a generated id names no endpoint',
  'DELETE /v1/webhooks/{webhookId}': 'a generated id names no endpoint',
  'POST /v1/webhooks/{webhookId}/rotate-secret': 'a generated id names no endpoint',
  'GET /v1/webhooks/{webhookId}/deliveries': 'a generated id names no endpoint',
  'POST /v1/webhooks/{webhookId}/deliveries/{messageId}/redeliver': 'generated ids name no delivery',
}

/**
 * After an operation's run: its valid requests reached the handler and succeeded often enough (a share
 * of 2xx answers), so "valid → never 400" was not met by refusing everything another way (401, 404, 429).
 */
export function expectValidReached(f: FuzzApp, op: Operation, minShare = 0.1): void {
  const cases = Object.entries(f.tally[op.id]?.cases ?? {})
  const valid = cases.filter(([k]) => k.startsWith('valid '))
  const total = valid.reduce((n, [, c]) => n + c, 0)
  // A cap that a long run reaches answers 409 from then on: those requests reached the service too.
  const reached = op.id in CAPPED ? /^valid (2\d\d|409)$/ : /^valid 2\d\d$/
  const ok = valid.filter(([k]) => reached.test(k)).reduce((n, [, c]) => n + c, 0)
  const seen = JSON.stringify(Object.fromEntries(valid))
  expect(total, `${op.id}: no valid case was generated`).toBeGreaterThan(0)
  if (op.id in NOT_FOUND_BY_DESIGN) {
    // Reached the handler: it looked the id up and answered the documented 404 (or found it by chance).
    expect(
      valid.map(([k]) => k).filter((k) => k !== 'valid 404' && !/^valid 2\d\d$/.test(k)),
      `${op.id} (${NOT_FOUND_BY_DESIGN[op.id]}): ${seen}`,
    ).toEqual([])
    return
  }
  expect(
    ok / total,
    `${op.id}: only ${ok} of ${total} valid requests answered 2xx ${seen}`,
  ).toBeGreaterThanOrEqual(minShare)
}
