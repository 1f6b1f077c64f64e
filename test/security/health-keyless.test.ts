import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ClusterReport } from '../../src/services/runtime/cluster.js'
import { build, type Harness, type TestTenant } from '../helpers/build.js'

/**
 * Issue 26, item 12: without a key, /v1/health says only its status and, when degraded, a reason
 * code; the details (Redis's address in `problem`, versions, sources) go to a caller with a key.
 */
const PROBLEM = 'connect ECONNREFUSED 10.1.2.3:6379'
const report: ClusterReport = { node: 'n1', limits: 'node', redis: 'unreachable', problem: PROBLEM, jobs: [] }
let h: Harness
let t: TestTenant

beforeAll(async () => {
  h = await build({ cluster: () => report })
  t = await h.tenant()
})
afterAll(async () => {
  await h.close()
})

describe('health without a key', () => {
  it('answers only the status and a reason code', async () => {
    const res = await h.app.inject({ url: '/v1/health' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ status: 'degraded', reason: 'redis_unreachable' })
    expect(res.body).not.toContain('10.1.2.3')
  })

  it('a wrong key gets the same short answer, never a 401', async () => {
    const res = await h.app.inject({ url: '/v1/health', headers: { 'x-api-key': 'vk_wrongwrongwrongwrong' } })
    expect(res.statusCode).toBe(200)
    expect(Object.keys(res.json()).sort()).toEqual(['reason', 'status'])
  })

  it('a caller with a key gets the details', async () => {
    const res = await h.app.inject({ url: '/v1/health', headers: t.headers })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({
      status: 'degraded',
      reason: 'redis_unreachable',
      database: { reachable: true },
      cluster: { redis: 'unreachable', problem: PROBLEM },
    })
  })
})
