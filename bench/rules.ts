/**
 * The cost of a tenant's rules (issue 28): 100 enforced rules per event, as a share of the CPU time an
 * event costs without rules. Two tenants score the same deterministic mix of events (with attributes)
 * through POST /v1/score in-process on SQLite; one has 100 enforced rules, the other none, both the
 * same declared attributes. Rounds alternate between them so drift hits both; the figure is CPU time
 * (user + system) per event. The engine alone is measured too: scoring the recorded inputs again with
 * and without the compiled rules. Target: under 10 % of the per-event time.
 *
 *   npm run bench:rules [-- --events N] [--rounds N]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { buildApp } from '../src/app.js'
import { loadSettings } from '../src/config/settings.js'
import { loadIntel } from '../src/intel/index.js'
import { score } from '../src/scoring/engine.js'
import { type RecordedInput, replayInput } from '../src/scoring/recorded.js'
import type { RuleSpec } from '../src/scoring/rules/types.js'
import { createTenant } from '../src/services/access/tenants.js'
import { scoringConfig } from '../src/services/rules/compile.js'
import { openStore } from '../src/store/index.js'
import { Hasher } from '../src/util/secrets.js'
import { startBenchDns } from './dns.js'
import { scoreBodies } from './score-mix.js'

export const RULES_TARGET = 0.1

const ATTRIBUTES = { card_fp: { hashed: true, counted: true } }

/** 100 enforced rules of the shapes tenants write: attributes, signals, reasons, lists, counts. */
export function hundredRules(): RuleSpec[] {
  // Each condition holds on a few events of the mix at most, as a tenant's rules do (the bench
  // prints how many fire per event).
  const shapes = [
    (n: number) => `event.name == 'checkout' && event.attributes.amount > ${1440 + n}`,
    (n: number) => `has(event.attributes.plan) && event.attributes.plan == 'enterprise_${n}'`,
    (n: number) => `'gift_card' in event.attributes.items && score >= ${60 + (n % 30)}`,
    (n: number) => `ip.datacenter && event.attributes.amount > ${1000 + n * 3}`,
    (n: number) => `'datacenter_ip' in reasons && velocity.ip_accounts >= ${8 + (n % 5)}`,
    (n: number) => `has(counts.card_fp) && counts.card_fp.accounts_24h >= ${12 + (n % 4)}`,
    (n: number) => `email.disposable && !phone.present && device.accounts >= ${3 + (n % 3)}`,
    (n: number) => `'vip_${n % 3}' in lists.user && event.country != null && event.country != ip.country`,
    (n: number) => `event.attributes.card_country != ip.country && score > ${70 + (n % 20)}`,
    (n: number) => `device.headless && device.tampered && device.antidetect_score > ${50 + (n % 40)}`,
  ]
  return Array.from({ length: 100 }, (_, i) => ({
    id: `rule_${i}`,
    when: shapes[i % shapes.length]!(i),
    then: { score: (i % 5) - 2 },
    mode: 'enforce' as const,
    rollout: 100,
  }))
}

/** The mix with attributes a checkout carries. */
function bodies(count: number): Record<string, unknown>[] {
  return scoreBodies(count).map((b, i) => ({
    ...b,
    attributes: {
      amount: (i * 37) % 1500,
      plan: `plan_${i % 9}`,
      card_fp: `card-${i % 300}`,
      card_country: ['US', 'DE', 'GB'][i % 3]!,
      items: i % 4 === 0 ? ['gift_card'] : ['book'],
    },
  }))
}

const cpuUs = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

export interface RulesFigures {
  baseUs: number
  rulesUs: number
  overhead: number
  engineBaseUs: number
  engineRulesUs: number
  /** Rules that held per event of the mix. */
  firedPerEvent: number
}

export async function benchRules(events = 2000, rounds = 3): Promise<RulesFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-bench-rules-'))
  const store = await openStore({ kind: 'sqlite', file: join(dir, 'bench.db') })
  const dns = await startBenchDns()
  const intel = await loadIntel({
    feedsDir: loadSettings().feeds.dir,
    email: { mx: { servers: [dns.server] } },
  })
  const clock = { now: () => Date.now() }
  const app = await buildApp({ store, clock, hasher: new Hasher('bench-secret'), intel })
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
      payload: { attributes: ATTRIBUTES, rules },
    })
    if (res.statusCode !== 200) throw new Error(`config answered ${res.statusCode}: ${res.body}`)
    return headers
  }
  try {
    const plain = await tenant('no rules', [])
    const ruled = await tenant('100 rules', hundredRules())
    const mix = bodies(events)
    const run = async (headers: Record<string, string>) => {
      const c0 = cpuUs()
      for (const payload of mix) {
        const res = await app.inject({ method: 'POST', url: '/v1/score', headers, payload })
        if (res.statusCode !== 200) throw new Error(`score answered ${res.statusCode}: ${res.body}`)
      }
      return (cpuUs() - c0) / mix.length
    }
    // Warm-up: JIT, caches and compiled rules for both.
    await run(plain)
    await run(ruled)
    const base: number[] = []
    const withRules: number[] = []
    for (let r = 0; r < rounds; r++) {
      base.push(await run(plain))
      withRules.push(await run(ruled))
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    const baseUs = median(base)
    const rulesUs = median(withRules)

    // The engine alone, on the recorded inputs of the ruled tenant's events.
    const rows = await store.db.all<{ inputs: string }>(
      'SELECT inputs FROM events WHERE inputs IS NOT NULL ORDER BY created_ms DESC LIMIT ?',
      [events],
    )
    const inputs = rows.map((r) => JSON.parse(r.inputs) as RecordedInput)
    const stored = await store.config.current(
      (await store.db.get<{ tenant_id: string }>(
        "SELECT id AS tenant_id FROM tenants WHERE name = '100 rules'",
      ))!.tenant_id,
    )
    const effective = {
      weights: {} as never,
      thresholds: {} as never,
      rules: stored.overrides.rules,
      attributes: stored.overrides.attributes,
    }
    const withConfig = scoringConfig(effective)
    const { rules: _r, ...noRules } = withConfig
    const engine = (config: typeof withConfig) => {
      const t0 = performance.now()
      for (let k = 0; k < 5; k++) for (const i of inputs) score(replayInput(i, config))
      return ((performance.now() - t0) * 1000) / (inputs.length * 5)
    }
    engine(withConfig)
    engine(noRules)
    const engineBaseUs = engine(noRules)
    const engineRulesUs = engine(withConfig)
    const fired = inputs.reduce(
      (n, i) => n + score(replayInput(i, withConfig)).reasons.filter((r) => r.startsWith('rule:')).length,
      0,
    )
    return {
      baseUs,
      rulesUs,
      overhead: (rulesUs - baseUs) / baseUs,
      engineBaseUs,
      engineRulesUs,
      firedPerEvent: fired / Math.max(1, inputs.length),
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
    options: { events: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' } },
  })
  const f = await benchRules(Number(values.events), Number(values.rounds))
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`
  console.log('tenant rules: CPU per event through POST /v1/score (SQLite, in-process, median of rounds)')
  console.log(`  no rules:            ${f.baseUs.toFixed(0)} µs`)
  console.log(`  100 enforced rules:  ${f.rulesUs.toFixed(0)} µs`)
  console.log(
    `  overhead:            ${pct(f.overhead)} (target < ${pct(RULES_TARGET)}: ${f.overhead < RULES_TARGET ? 'met' : 'NOT met'})`,
  )
  console.log(`  rules that held:     ${f.firedPerEvent.toFixed(2)} per event`)
  console.log(
    `  engine alone:        ${f.engineBaseUs.toFixed(1)} µs without rules, ${f.engineRulesUs.toFixed(1)} µs with (${(f.engineRulesUs - f.engineBaseUs).toFixed(1)} µs for 100 rules)`,
  )
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) await main()
