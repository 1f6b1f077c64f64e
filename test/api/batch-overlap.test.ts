import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, type Engine, type Harness } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

// A batch decides a row beside the one before it when the two share no entity (store/engine/overlap.ts).
// Whatever pairs it forms, every row must be decided as if the rows came one request at a time: the same
// rows, heavily overlapping in IPs (an IPv6 /64 included), fingerprints, accounts and mailboxes, go to one
// tenant as a batch and to another one by one, and every decision must match.
const hasPg = await pgAvailable()

/** A seeded mix drawn from small pools, so rows share entities often but not always. */
function rows(count: number, seed: number): Record<string, unknown>[] {
  let x = seed
  const rnd = (n: number) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    return (x >>> 8) % n
  }
  const ips = [
    '73.162.10.20',
    '79.200.1.1',
    '2003:e1::1',
    '2003:e1::2',
    '24.5.1.1',
    '185.220.101.1',
    '8.8.8.8',
  ]
  const mails = [
    'maria.garcia@gmail.com',
    'mariagarcia+x@gmail.com',
    'li.wei@outlook.com',
    'xkqzvbwp@yahoo.com',
  ]
  return Array.from({ length: count }, (_, i) => {
    const row: Record<string, unknown> = { event: ['signup', 'login', 'checkout'][rnd(3)] }
    if (rnd(6) > 0)
      row['ip'] =
        rnd(4) === 0 ? `${30 + rnd(150)}.${rnd(250)}.${rnd(250)}.${1 + rnd(250)}` : ips[rnd(ips.length)]
    if (rnd(5) > 0) row['user_id'] = rnd(3) === 0 ? `u-${i}` : `u${rnd(8)}`
    if (rnd(3) > 0) row['email'] = rnd(3) === 0 ? `new${i}@example.org` : mails[rnd(mails.length)]
    if (rnd(5) > 0) row['device_id'] = rnd(3) === 0 ? `fp-${i}` : `fp${rnd(6)}`
    if (rnd(4) === 0) row['event_country'] = ['US', 'DE'][rnd(2)]
    return row
  })
}

/** A decision without what names the event or a device identity (new identities are random per tenant). */
function decision(r: Record<string, unknown>) {
  const d = r['device'] as Record<string, unknown> | undefined
  return {
    score: r['score'],
    verdict: r['verdict'],
    reasons: r['reasons'],
    checks: r['checks'],
    device: d && {
      rung: d['resolution_rung'],
      accounts: d['account_count'],
      sameNetwork: d['account_count_same_network'],
      ips: d['distinct_ips'],
    },
  }
}

/** Two fresh tenants of `h` and a way to send the same rows to one as a batch and to the other one by one. */
async function pair(h: Harness) {
  const batched = await h.tenant({ rateLimit: 100_000 })
  const single = await h.tenant({ rateLimit: 100_000 })
  const send = async (headers: Record<string, string>, row: object) => {
    const r = await h.app.inject({ method: 'POST', url: '/v1/score', headers, payload: row })
    expect(r.statusCode, r.body).toBe(200)
    return r.json() as Record<string, unknown>
  }
  return {
    /** The same rows one by one to both tenants (a shared history). */
    history: async (mix: object[]) => {
      for (const row of mix) for (const t of [batched, single]) await send(t.headers, row)
    },
    /** The rows as one batch to the first tenant and one at a time to the second: both decisions. */
    compare: async (mix: object[]) => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/batch/score',
        headers: batched.headers,
        payload: { rows: mix },
      })
      expect(res.statusCode, res.body).toBe(200)
      const fromBatch = (res.json().results as Record<string, unknown>[]).map(decision)
      const oneByOne: ReturnType<typeof decision>[] = []
      for (const row of mix) oneByOne.push(decision(await send(single.headers, row)))
      return { fromBatch, oneByOne }
    },
  }
}

describe.each<Engine>(['sqlite', 'postgres'])('a batch on %s', (engine) => {
  let h: Harness
  beforeAll(async () => {
    if (engine === 'postgres' && !hasPg) return
    h = await build({ engine })
  })
  afterAll(async () => {
    await h?.close()
  })

  it.skipIf(engine === 'postgres' && !hasPg)(
    'decides every row as the same rows sent one at a time',
    async () => {
      const p = await pair(h)
      // The same history for both, two days old, so that accounts are established (takeover can fire).
      await p.history(rows(120, 3))
      h.clock.advance(2 * 86_400_000)
      const mix = rows(240, 7)
      const { fromBatch, oneByOne } = await p.compare(mix)
      fromBatch.forEach((d, i) => {
        expect(d, `row ${i}: ${JSON.stringify(mix[i])}`).toEqual(oneByOne[i])
      })
      // The mix is not trivial: rows share history and fire reuse and velocity signals.
      const fired = new Set(fromBatch.flatMap((d) => d.reasons as string[]))
      expect(fired).toContain('device_reuse')
      expect(fired).toContain('mailbox_reuse')
      expect(fired).toContain('account_takeover')
    },
  )

  it.skipIf(engine === 'postgres' && !hasPg)(
    "an account's rows see each other even when nothing else is shared",
    async () => {
      const p = await pair(h)
      const home = { event: 'login', user_id: 'acct', device_id: 'fp-home', ip: '73.162.10.20' }
      await p.history([home, home])
      h.clock.advance(2 * 86_400_000)
      // Each row: the same account, a new device, another country, another address: only the account
      // is shared, and each row's takeover evidence counts the allowed rows before it.
      const mix = [
        { event: 'login', user_id: 'acct', device_id: 'fp-a', ip: '79.200.1.1' },
        { event: 'login', user_id: 'acct', device_id: 'fp-b', ip: '86.11.5.5' },
        { event: 'login', user_id: 'acct', device_id: 'fp-c', ip: '90.11.5.5' },
      ]
      const { fromBatch, oneByOne } = await p.compare(mix)
      expect(fromBatch).toEqual(oneByOne)
      expect(fromBatch.every((d) => (d.reasons as string[]).includes('account_takeover'))).toBe(true)
    },
  )

  it.skipIf(engine === 'postgres' && !hasPg)(
    'a wave of generated mailboxes counts the batch’s earlier rows',
    async () => {
      const p = await pair(h)
      const locals = [
        'xkqzvbwp',
        'qzvxkwtp',
        'vbnqxzrk',
        'wzqxkvtb',
        'pxqzvkrw',
        'kqxzwvbn',
        'zvqxpkwt',
        'rqzxvkbw',
      ]
      const mix = locals.map((l, i) => ({
        event: 'signup',
        user_id: `g${i}`,
        email: `${l}@gmail.com`,
        ip: `73.162.${10 + i}.20`,
        device_id: `fp-g${i}`,
      }))
      const { fromBatch, oneByOne } = await p.compare(mix)
      expect(fromBatch).toEqual(oneByOne)
      expect(fromBatch.some((d) => (d.reasons as string[]).includes('gibberish_wave'))).toBe(true)
    },
  )
})
