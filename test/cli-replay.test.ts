import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { build, type Harness, TEST_SECRET } from './helpers/build.js'
import { runCliAsync } from './helpers/processes.js'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

describe('verdict replay', () => {
  it('prints the recorded and replayed decisions of an event by its id alone, and refuses unknown ids', async () => {
    h = await build()
    const t = await h.tenant()
    const post = (url: string, payload: object) =>
      h!.app.inject({ method: 'POST', url, headers: t.headers, payload })
    const scored = (
      await post('/v1/score', { event: 'login', ip: '8.8.8.8', device: { is_headless: true } })
    ).json()
    await h.app.inject({
      method: 'PUT',
      url: '/v1/config',
      headers: t.headers,
      payload: { weights: { datacenterIp: 0 } },
    })
    const env = { DATABASE_URL: join(h.dir, 'verdict.db'), VERDICT_SECRET: TEST_SECRET }

    const res = await runCliAsync(['replay', scored.event_id], env)
    expect(res.status, res.stderr).toBe(0)
    const decision = { score: scored.score, verdict: scored.verdict, reasons: scored.reasons }
    expect(JSON.parse(res.stdout)).toMatchObject({
      recorded: decision,
      replayed: decision,
      identical: true,
      config_version: 0,
    })

    const missing = await runCliAsync(['replay', '00000000-0000-7000-8000-000000000000'], env)
    expect(missing.status).toBe(1)
    expect(JSON.parse(missing.stderr.split('\n')[0]!).error).toContain('no event')
    const usage = await runCliAsync(['replay'], env)
    expect(usage.status).toBe(2)
    // A usage error is a short hint naming what is missing (issue 30), not the whole usage.
    expect(usage.stderr).toContain('replay takes an EVENT_ID')
  })
})
