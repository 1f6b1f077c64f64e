import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { build, type Harness, TEST_SECRET } from './helpers/build.js'
import { runCliAsync } from './helpers/processes.js'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

describe('verdict report rules', () => {
  it('prints the performance table, or the same figures as JSON with --json', async () => {
    h = await build()
    // The CLI reads the wall clock: the harness's events are placed at the current time.
    h.clock.set(Date.now())
    const t = await h.tenant()
    const post = (url: string, payload: object) =>
      h!.app.inject({ method: 'POST', url, headers: t.headers, payload })
    for (let i = 0; i < 3; i++) {
      const r = await post('/v1/score', {
        event: 'login',
        user_id: `cli-${i}`,
        device: { is_headless: true },
      })
      if (i < 2) await post('/v1/label', { label: i === 0 ? 'fraud' : 'legit', event_id: r.json().event_id })
    }
    const env = { DATABASE_URL: join(h.dir, 'verdict.db'), VERDICT_SECRET: TEST_SECRET }

    const table = await runCliAsync(['report', 'rules', '--tenant', t.tenantId], env)
    expect(table.status, table.stderr).toBe(0)
    const lines = table.stdout.trimEnd().split('\n')
    expect(lines[0]).toBe('rules over the last 30 day(s); 2 labelled event(s)')
    expect(lines[1]?.split(/\s{2,}/)).toEqual([
      'reason',
      'fired',
      'fraud',
      'legit',
      'precision',
      '95% interval',
      'recall',
      'weight',
    ])
    expect(lines[2]?.split(/\s+/)).toEqual([
      'headless_browser',
      '3',
      '1',
      '1',
      '0.50',
      '0.09-0.91',
      '1.00',
      '-',
    ])

    const json = await runCliAsync(
      ['report', 'rules', '--tenant', t.tenantId, '--window-days', '7', '--json'],
      env,
    )
    expect(json.status, json.stderr).toBe(0)
    const body = JSON.parse(json.stdout)
    expect(body).toMatchObject({ window_days: 7, labelled_events: 2 })
    expect(body.rules[0]).toMatchObject({
      reason: 'headless_browser',
      fired: 3,
      precision: 0.5,
      suggested_weight: null,
    })

    for (const args of [
      ['report', 'rules'],
      ['report', 'rules', '--tenant', t.tenantId, '--window-days', '0'],
      ['report', 'rules', '--tenant', t.tenantId, '--window-days', '366'],
      ['report', 'rules', '--tenant', 'no-such-tenant'],
      ['report', 'nothing', '--tenant', t.tenantId],
    ]) {
      const bad = await runCliAsync(args, env)
      expect(bad.status, args.join(' ')).toBe(2)
      expect(bad.stdout).toBe('')
    }
  })
})
