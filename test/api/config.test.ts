import { afterEach, describe, expect, it } from 'vitest'
import {
  DEFAULT_THRESHOLDS,
  DEFAULT_WEIGHTS,
  THRESHOLD_KEYS,
  WEIGHT_KEYS,
} from '../../src/scoring/tenant-config.js'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'

const hasPg = await pgAvailable()

describe.each<Engine>(['sqlite', 'postgres'])('/v1/config on %s', (engine) => {
  let h: Harness
  let t: TestTenant
  const setup = async () => {
    h = await build({ engine })
    t = await h.tenant()
  }
  afterEach(async () => {
    await h?.close()
  })
  const get = () => h.app.inject({ url: '/v1/config', headers: t.headers })
  const put = (payload: unknown, headers = t.headers) =>
    h.app.inject({ method: 'PUT', url: '/v1/config', headers, payload: payload as object })
  const run = it.skipIf(engine === 'postgres' && !hasPg)

  run('starts with no overrides and the default effective config', async () => {
    await setup()
    const body = (await get()).json()
    expect(body.overrides).toEqual({ weights: {}, thresholds: {} })
    expect(body.effective).toEqual({ weights: DEFAULT_WEIGHTS, thresholds: DEFAULT_THRESHOLDS })
  })

  run('changes only the keys sent, per tenant', async () => {
    await setup()
    const other = await h.tenant()
    expect((await put({ weights: { datacenterIp: 60 } })).statusCode).toBe(200)
    const res = await put({ thresholds: { review: 30 } })
    expect(res.json().overrides).toEqual({ weights: { datacenterIp: 60 }, thresholds: { review: 30 } })
    const body = (await get()).json()
    expect(body.effective.weights).toEqual({ ...DEFAULT_WEIGHTS, datacenterIp: 60 })
    expect(body.effective.thresholds).toEqual({ ...DEFAULT_THRESHOLDS, review: 30 })
    const theirs = (await h.app.inject({ url: '/v1/config', headers: other.headers })).json()
    expect(theirs.overrides).toEqual({ weights: {}, thresholds: {} })
    expect((await put({})).json().overrides).toEqual({
      weights: { datacenterIp: 60 },
      thresholds: { review: 30 },
    })
  })

  run('accepts every documented key at 0 and 100 bounds', async () => {
    await setup()
    for (const k of WEIGHT_KEYS) {
      expect((await put({ weights: { [k]: 0 } })).statusCode, k).toBe(200)
      expect((await put({ weights: { [k]: 100 } })).statusCode, k).toBe(200)
    }
    // Thresholds keep their ordering constraints, so raise the upper ones first.
    expect(
      (await put({ thresholds: { block: 100, deviceReuseHigh: 100, ipVelocityHigh: 100 } })).statusCode,
    ).toBe(200)
    for (const k of THRESHOLD_KEYS) {
      expect((await put({ thresholds: { [k]: 100 } })).statusCode, k).toBe(200)
    }
  })

  run('rejects unknown keys, values outside 0-100 and non-numbers, changing nothing', async () => {
    await setup()
    await put({ weights: { emailNoMx: 5 } })
    const cases: [unknown, string][] = [
      [{ weights: { datacenterIp: 101 } }, 'body.weights.datacenterIp'],
      [{ weights: { datacenterIp: -1 } }, 'body.weights.datacenterIp'],
      [{ thresholds: { review: 100.5 } }, 'body.thresholds.review'],
      [{ weights: { datacenterIp: '50' } }, 'body.weights.datacenterIp'],
      [{ weights: { nope: 5 } }, 'body.weights.nope'],
      [{ thresholds: { datacenterIp: 5 } }, 'body.thresholds.datacenterIp'],
      [{ colors: {} }, 'body.colors'],
      [{ weights: { datacenterIp: 10, emailNoMx: 500 } }, 'body.weights.emailNoMx'],
    ]
    for (const [payload, field] of cases) {
      const res = await put(payload)
      expect(res.statusCode, JSON.stringify(payload)).toBe(400)
      expect(res.json().error, JSON.stringify(payload)).toContain(field)
    }
    expect((await get()).json().overrides).toEqual({ weights: { emailNoMx: 5 }, thresholds: {} })
  })

  run('rejects a review threshold above the block threshold', async () => {
    await setup()
    const res = await put({ thresholds: { review: 80 } })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toContain('thresholds.review')
    expect((await put({ thresholds: { review: 80, block: 90 } })).statusCode).toBe(200)
    expect((await put({ thresholds: { ipVelocityMed: 12 } })).statusCode).toBe(400)
    expect((await get()).json().overrides.thresholds).toEqual({ review: 80, block: 90 })
  })
})
