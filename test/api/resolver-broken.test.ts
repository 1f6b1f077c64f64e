import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EmailIntel } from '../../src/intel/email/index.js'
import { describeSources, type Intel } from '../../src/intel/index.js'
import { build, type Harness } from '../helpers/build.js'
import { LoopbackDns } from '../helpers/dns-server.js'
import { testIntel } from '../helpers/intel.js'

/**
 * An offline deployment whose resolver answers NXDOMAIN for every name: without a check, every business
 * domain would look like it has no mail server. The loopback server knows no name at all.
 */
const dead = new LoopbackDns({})
// A working resolver that knows the canary and nothing else.
const alive = new LoopbackDns({
  'canary.example.com': { MX: [{ preference: 10, exchange: 'mx.canary.example.com' }] },
})

async function harnessWith(dns: LoopbackDns): Promise<Harness> {
  const base = (await testIntel()).intel
  const email = new EmailIntel({
    mx: { servers: [dns.server], timeoutMs: 2_000, canary: 'canary.example.com' },
  })
  const intel: Intel = { ...base, email, sources: () => describeSources(email, base.ip, base.phone) }
  return build({ intel })
}

beforeAll(async () => {
  await dead.start()
  await alive.start()
})
afterAll(async () => {
  await dead.stop()
  await alive.stop()
})

describe('a resolver that answers NXDOMAIN for everything', () => {
  it('does not fire email_no_mx, warns why, and /v1/health says the resolver is broken', async () => {
    const h = await harnessWith(dead)
    try {
      const t = await h.tenant()
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/score',
        headers: t.headers,
        payload: { event: 'signup', user_id: 'u-ops', email: 'ops@stripe-like-business.com' },
      })
      expect(res.statusCode, res.body).toBe(200)
      const body = res.json() as { reasons: string[]; warnings: string[] }
      expect(body.reasons).not.toContain('email_no_mx')
      expect(body.warnings.join('\n')).toMatch(/email_mx_unknown: .*resolver.*canary\.example\.com/)
      // The probe is cached: a second score asks the canary no more.
      const probes = dead.count('canary.example.com')
      await h.app.inject({
        method: 'POST',
        url: '/v1/score',
        headers: t.headers,
        payload: { event: 'signup', user_id: 'u-ops2', email: 'ops@another-business.com' },
      })
      expect(dead.count('canary.example.com')).toBe(probes)
      // The checks are details for a keyed caller (keyless health says only its status).
      const health = (await h.app.inject({ url: '/v1/health', headers: t.headers })).json()
      expect(health.status).toBe('ok')
      expect(health.checks.resolver).toMatchObject({ status: 'broken', canary: 'canary.example.com' })
    } finally {
      await h.close()
    }
  })

  it('with a working resolver, a domain without mail still gets email_no_mx', async () => {
    const h = await harnessWith(alive)
    try {
      const t = await h.tenant()
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/score',
        headers: t.headers,
        payload: { event: 'signup', user_id: 'u-x', email: 'someone@no-such-mail-domain.com' },
      })
      expect((res.json() as { reasons: string[] }).reasons).toContain('email_no_mx')
      // The checks are details for a keyed caller (keyless health says only its status).
      const health = (await h.app.inject({ url: '/v1/health', headers: t.headers })).json()
      expect(health.checks.resolver).toMatchObject({ status: 'ok', canary: 'canary.example.com' })
    } finally {
      await h.close()
    }
  })
})
