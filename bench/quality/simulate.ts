/**
 * Generates the labelled traffic and scores it through the real app: a SQLite file, a fresh install's
 * intelligence (no downloaded feeds), a loopback DNS that gives every domain an MX, and a manual clock
 * set to each event's time so that 14 days keep their timing.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../../src/app.js'
import { loadIntel } from '../../src/intel/index.js'
import { createTenant } from '../../src/services/access/tenants.js'
import { openStore } from '../../src/store/index.js'
import { ManualClock } from '../../src/util/clock.js'
import { Hasher } from '../../src/util/secrets.js'
import { startBenchDns } from '../dns.js'
import { ATTACKS } from './attacks.js'
import { LEGIT, registry } from './legit.js'
import {
  ACCESS,
  CLOUDFLARE_NOT_RELAY,
  HOSTING_ASNS,
  Networks,
  VPN_OWN_ASNS,
  VPN_RENTED_ASNS,
  ZSCALER_ASNS,
} from './networks.js'
import type { Scored } from './report.js'
import { Rng } from './rng.js'
import { type Planned, START, World } from './world.js'

/** Share of the events that are attacks. */
const ATTACK_SHARE = 0.1

export function generate(seed: number, events: number, nets: Networks): Planned[] {
  registry.length = 0
  const w = new World(new Rng(seed), nets)
  const plan = (list: typeof LEGIT, budget: number) => {
    const total = list.reduce((s, [, , share]) => s + share, 0)
    for (const [, fn, share] of list) {
      const target = (budget * share) / total
      const before = w.events.length
      while (w.events.length - before < target) fn(w)
    }
  }
  // Attacks come second: takeover and stuffing target the accounts the populations created.
  plan(LEGIT, events * (1 - ATTACK_SHARE))
  plan(ATTACKS, events * ATTACK_SHARE)
  return w.events.sort((a, b) => a.t - b.t)
}

export interface SimulateOptions {
  seed: number
  events: number
  /** Called every `every` events with the number done. */
  progress?: (done: number, total: number) => void
  /** Tenant configuration to apply before the run (PUT /v1/config body). */
  config?: Record<string, unknown>
  /** Keep what was sent and the response's device profile and checks on each scored event (for --json). */
  detail?: boolean
}

export async function simulate(o: SimulateOptions): Promise<Scored[]> {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-quality-'))
  const feedsDir = join(dir, 'feeds')
  mkdirSync(feedsDir)
  const dns = await startBenchDns()
  const store = await openStore({ kind: 'sqlite', file: join(dir, 'verdict.db') })
  const clock = new ManualClock(START)
  try {
    const intel = await loadIntel({ feedsDir, email: { mx: { servers: [dns.server] } } })
    const asns = [
      ...Object.values(ACCESS).flatMap((a) => [...a.home, ...a.mobile]),
      ...HOSTING_ASNS,
      ...VPN_OWN_ASNS,
      ...VPN_RENTED_ASNS,
      ...ZSCALER_ASNS,
    ]
    // Relay users no longer draw from all of Cloudflare: the rest of it must stay hosting, or attacks
    // through WARP or Workers would pass as relay users, which no population here would show.
    for (const ip of CLOUDFLARE_NOT_RELAY) {
      const r = intel.ip.lookup(ip)
      if (!r?.isDatacenter || r.isPrivacyRelay)
        throw new Error(`${ip} (Cloudflare, not relay) must stay hosting`)
    }
    const planned = generate(o.seed, o.events, new Networks(intel.ip, asns))
    const app = await buildApp({ store, clock, hasher: new Hasher('quality-bench-secret'), intel })
    try {
      const { apiKey } = await createTenant(store, clock, {
        name: 'quality',
        rateLimit: 1e9,
        monthlyQuota: 1e9,
      })
      const headers = { 'x-api-key': apiKey }
      if (o.config) {
        const res = await app.inject({ method: 'PUT', url: '/v1/config', headers, payload: o.config })
        if (res.statusCode !== 200) throw new Error(`config answered ${res.statusCode}: ${res.body}`)
      }
      const tokenRng = new Rng(o.seed ^ 0x51ed)
      const out: Scored[] = []
      for (const [i, e] of planned.entries()) {
        clock.set(e.t)
        const row = { ...e.row }
        for (const k of Object.keys(row)) if (row[k] === undefined) delete row[k]
        if (e.device?.token && tokenRng.chance(e.device.keep)) row['device_token'] = e.device.token
        const res = await app.inject({ method: 'POST', url: '/v1/score', headers, payload: row })
        if (res.statusCode !== 200) throw new Error(`score answered ${res.statusCode}: ${res.body}`)
        const body = res.json() as {
          score: number
          verdict: Scored['verdict']
          reasons: string[]
          device_token?: string
          device?: Record<string, unknown>
          checks?: { reason: string; weight: number }[]
        }
        if (e.device && body.device_token) e.device.token = body.device_token
        out.push({
          t: e.t,
          label: e.label,
          pop: e.pop,
          actor: e.actor,
          score: body.score,
          verdict: body.verdict,
          reasons: body.reasons,
          fired: (body.checks ?? []).map((c) => ({ reason: c.reason, weight: c.weight })),
          ...(o.detail
            ? {
                detail: {
                  sent: { ...row, device_token: row['device_token'] === undefined ? undefined : true },
                  device: body.device,
                  checks: body.checks,
                },
              }
            : {}),
        })
        if (o.progress && (i + 1) % 2000 === 0) o.progress(i + 1, planned.length)
      }
      return out
    } finally {
      await app.close()
    }
  } finally {
    await store.close()
    dns.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
