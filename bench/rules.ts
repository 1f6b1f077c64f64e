/**
 * The cost of a tenant's rules (issue 28): 100 enforced rules per event, as a share of the CPU time an
 * event costs without rules. Two tenants score the same deterministic mix of events (with attributes)
 * through POST /v1/score in-process on SQLite; one has 100 enforced rules, the other none, both the
 * same declared attributes. After a warm-up over `--events` of the mix, every later event is scored by
 * both tenants one after the other (which goes first alternates), so load from other processes falls on
 * both alike; each event is scored once per tenant. The figure is CPU time (user + system) per event of
 * each; the quartiles of the ratio over rounds of `--round-events` show how steady it is. The engine alone is measured too, in-process
 * on the recorded inputs with and without the compiled rules: CPU time, the least of many short rounds
 * (load from other processes only ever adds to a round), the steadiest figure on a shared machine.
 * Target: under 10 % of the per-event time. The rule sets are described in bench/rules-mix.ts.
 *
 *   npm run bench:rules [-- --events N] [--rounds N] [--round-events N] [--mix realistic|dense]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { buildApp } from '../src/app.js'
import { loadSettings } from '../src/config/settings.js'
import { loadIntel } from '../src/intel/index.js'
import { score } from '../src/scoring/engine.js'
import { type RecordedInput, replayInput } from '../src/scoring/recorded.js'
import { emptyMemo, guardsPass, rulePlan } from '../src/scoring/rules/plan.js'
import type { RuleSpec } from '../src/scoring/rules/types.js'
import { createTenant } from '../src/services/access/tenants.js'
import { attributeHash } from '../src/services/rules/attribute-hash.js'
import { scoringConfig } from '../src/services/rules/compile.js'
import { openStore } from '../src/store/index.js'
import { Hasher } from '../src/util/secrets.js'
import { startBenchDns } from './dns.js'
import { BENCH_ATTRIBUTES, mixBodies, mixRules, type RuleMix, STOLEN_CARDS } from './rules-mix.js'

export const RULES_TARGET = 0.1

/** 100 enforced rules of the realistic mix (bench/rules-mix.ts). */
export const hundredRules = (mix: RuleMix = 'realistic'): RuleSpec[] => mixRules(mix)

const cpuUs = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

export interface RulesFigures {
  baseUs: number
  rulesUs: number
  /** With rules / without - 1, over all the measured events. */
  overhead: number
  /** The same per round: its quartiles (how steady the figure is on this machine). */
  spread: [number, number, number]
  engineBaseUs: number
  engineRulesUs: number
  /** Rules that held per event of the mix. */
  firedPerEvent: number
  /** Rules per event of its name or of any name, and of those the ones whose guards held (evaluated). */
  namedPerEvent: number
  evaluatedPerEvent: number
  /** Rules that held at least once, and the largest share of events one rule held on. */
  rulesHeld: number
  maxRuleShare: number
  /** The three rules that held most often, with their share of events. */
  top: { id: string; share: number }[]
}

export async function benchRules(
  events = 2000,
  rounds = 40,
  mix: RuleMix = 'realistic',
  roundEvents = 200,
): Promise<RulesFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-bench-rules-'))
  const store = await openStore({ kind: 'sqlite', file: join(dir, 'bench.db') })
  const dns = await startBenchDns()
  const intel = await loadIntel({
    feedsDir: loadSettings().feeds.dir,
    email: { mx: { servers: [dns.server] } },
  })
  const clock = { now: () => Date.now() }
  const hasher = new Hasher('bench-secret')
  const app = await buildApp({ store, clock, hasher, intel })
  const tenant = async (name: string, rules: RuleSpec[]) => {
    const { apiKey } = await createTenant(store, clock, {
      name,
      rateLimit: 1_000_000_000,
      monthlyQuota: 1_000_000_000,
    })
    const headers = { 'x-api-key': apiKey }
    const res = await app.inject({
      method: 'PUT',
      url: '/v1/config',
      headers,
      payload: { attributes: BENCH_ATTRIBUTES, rules },
    })
    if (res.statusCode !== 200) throw new Error(`config answered ${res.statusCode}: ${res.body}`)
    // Both tenants list the same stolen cards: both look their cards up, only one has rules reading it.
    const rows = STOLEN_CARDS.map((value) => ({ list: 'stolen_cards', type: 'attribute', value }))
    const listed = await app.inject({ method: 'POST', url: '/v1/batch/lists', headers, payload: { rows } })
    if (listed.statusCode !== 200) throw new Error(`lists answered ${listed.statusCode}: ${listed.body}`)
    return headers
  }
  try {
    const plain = await tenant('no rules', [])
    const ruled = await tenant('100 rules', hundredRules(mix))
    // Every event is scored once by each tenant: the warm-up takes the first `events`, the rounds the
    // ones after, so histories (counts, velocity) grow as a stream's do, not by replaying one mix.
    const size = Math.max(1, roundEvents)
    const all = mixBodies(events + rounds * size, mix)
    const bodies = all.slice(0, events)
    const one = async (headers: Record<string, string>, payload: Record<string, unknown>) => {
      const c0 = cpuUs()
      const res = await app.inject({ method: 'POST', url: '/v1/score', headers, payload })
      if (res.statusCode !== 200) throw new Error(`score answered ${res.statusCode}: ${res.body}`)
      return cpuUs() - c0
    }
    // Warm-up: JIT, caches and compiled rules for both, over the first `events` of the mix.
    for (const payload of bodies) await one(plain, payload)
    for (const payload of bodies) await one(ruled, payload)
    // Then every later event is scored by both tenants one after the other (which one first
    // alternates), so load from other processes, which comes and goes within seconds, falls on both
    // alike. Rounds of `roundEvents` show how steady the figure is.
    const ratios: number[] = []
    let baseTotal = 0
    let rulesTotal = 0
    for (let r = 0; r < rounds; r++) {
      let b = 0
      let w = 0
      for (const [k, payload] of all.slice(events + r * size, events + (r + 1) * size).entries()) {
        if (k % 2 === 0) {
          b += await one(plain, payload)
          w += await one(ruled, payload)
        } else {
          w += await one(ruled, payload)
          b += await one(plain, payload)
        }
      }
      ratios.push(w / b - 1)
      baseTotal += b
      rulesTotal += w
    }
    const sorted = [...ratios].sort((a, b) => a - b)
    const quartile = (q: number) => sorted[Math.floor((sorted.length - 1) * q)]!
    const baseUs = baseTotal / (rounds * size)
    const rulesUs = rulesTotal / (rounds * size)

    // The engine alone, on the recorded inputs of the ruled tenant's events.
    const ruledId = (await store.db.get<{ id: string }>("SELECT id FROM tenants WHERE name = '100 rules'"))!
      .id
    const rows = await store.db.all<{ inputs: string }>(
      'SELECT inputs FROM events WHERE tenant_id = ? AND inputs IS NOT NULL ORDER BY created_ms DESC LIMIT ?',
      [ruledId, events],
    )
    const inputs = rows.map((r) => JSON.parse(r.inputs) as RecordedInput)
    const stored = await store.config.current(ruledId)
    const withConfig = scoringConfig(
      {
        weights: {} as never,
        thresholds: {} as never,
        rules: stored.overrides.rules,
        attributes: stored.overrides.attributes,
      },
      attributeHash(hasher, ruledId),
    )
    const { rules: compiled, ...noRules } = withConfig
    const ruledInputs = inputs.map((i) => replayInput(i, withConfig))
    const plainInputs = inputs.map((i) => replayInput(i, noRules))
    const engine = (xs: typeof ruledInputs) => {
      const c0 = cpuUs()
      for (const i of xs) score(i)
      return (cpuUs() - c0) / xs.length
    }
    const engineBase: number[] = []
    const engineRules: number[] = []
    for (let r = 0; r < 25; r++) {
      engineBase.push(engine(plainInputs))
      engineRules.push(engine(ruledInputs))
    }
    const held = new Map<string, number>()
    let fired = 0
    for (const i of ruledInputs)
      for (const code of score(i).reasons)
        if (code.startsWith('rule:')) {
          fired++
          held.set(code, (held.get(code) ?? 0) + 1)
        }
    // Rules evaluated per event: those of its name (or of any) whose guards its variables pass.
    const plan = rulePlan(compiled ?? [])
    let named = 0
    let evaluated = 0
    for (let k = 0; k < inputs.length; k++) {
      const bucket = plan.byName.get(inputs[k]!.facts?.event.name ?? '') ?? plan.other
      const builtIn = score(plainInputs[k]!)
      const memo = emptyMemo(bucket)
      const facts = { reasons: builtIn.reasons, score: builtIn.score }
      named += bucket.rules.length
      evaluated += bucket.rules.filter((r) => guardsPass(r, memo, ruledInputs[k]!, facts)).length
    }
    const n = Math.max(1, inputs.length)
    return {
      baseUs,
      rulesUs,
      overhead: rulesUs / baseUs - 1,
      spread: [quartile(0.25), quartile(0.5), quartile(0.75)],
      engineBaseUs: Math.min(...engineBase),
      engineRulesUs: Math.min(...engineRules),
      firedPerEvent: fired / n,
      namedPerEvent: named / n,
      evaluatedPerEvent: evaluated / n,
      rulesHeld: held.size,
      maxRuleShare: Math.max(0, ...held.values()) / n,
      top: [...held]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 3)
        .map(([code, k]) => ({ id: code.slice('rule:'.length), share: k / n })),
    }
  } finally {
    await app.close()
    dns.stop()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      events: { type: 'string', default: '2000' },
      rounds: { type: 'string', default: '40' },
      'round-events': { type: 'string', default: '200' },
      mix: { type: 'string', default: 'realistic' },
    },
  })
  if (values.mix !== 'realistic' && values.mix !== 'dense') throw new Error('--mix is realistic or dense')
  const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  const before = load()
  const f = await benchRules(
    Number(values.events),
    Number(values.rounds),
    values.mix,
    Number(values['round-events']),
  )
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`
  const engineUs = f.engineRulesUs - f.engineBaseUs
  console.log(
    `tenant rules (${values.mix} mix): CPU per event through POST /v1/score (SQLite, in-process, each event by both tenants in turn)`,
  )
  console.log(`  no rules:            ${f.baseUs.toFixed(0)} µs`)
  console.log(`  100 enforced rules:  ${f.rulesUs.toFixed(0)} µs`)
  console.log(
    `  overhead:            ${pct(f.overhead)}; per round of ${values['round-events']}: quartiles ${f.spread.map(pct).join(', ')} (target < ${pct(RULES_TARGET)}: ${f.overhead < RULES_TARGET ? 'met' : 'NOT met'})`,
  )
  console.log(
    `  rules per event:     ${f.namedPerEvent.toFixed(1)} for its name, ${f.evaluatedPerEvent.toFixed(1)} past their guards (evaluated); held: ${f.firedPerEvent.toFixed(2)} per event, ${f.rulesHeld} rules at least once, at most ${pct(f.maxRuleShare)} of events for one rule`,
  )
  console.log(`  held most:           ${f.top.map((t) => `${t.id} ${pct(t.share)}`).join(', ')}`)
  console.log(
    `  engine alone (CPU, least of 25 rounds): ${f.engineBaseUs.toFixed(1)} µs without rules, ${f.engineRulesUs.toFixed(1)} µs with (${engineUs.toFixed(1)} µs for 100 rules, ${pct(engineUs / f.baseUs)} of the per-event time)`,
  )
  console.log(`  load average:        ${before} before, ${load()} after`)
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) await main()
