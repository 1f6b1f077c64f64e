import compress from '@fastify/compress'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { nextPeriodStart } from '../services/access/quota-check.js'
import { usagePeriod } from '../store/access/usage.js'

/** `/v1/lists/:id` → a matcher of concrete paths. */
function pattern(url: string): RegExp {
  const body = url
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/')
  return new RegExp(`^${body}$`)
}

/**
 * The methods a known path answers, for a 405 with `Allow` instead of a 404 "no route" (the route table
 * holds every /v1 and console API route).
 */
export function allowedMethods(app: FastifyInstance, path: string): string[] {
  const methods = new Set<string>()
  for (const r of app.routeTable) if (pattern(r.url).test(path)) methods.add(r.method)
  return [...methods].sort()
}

/** What a keyed answer says about the month's quota (from the meter's last reading; no query per request). */
async function quotaHeaders(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const tenant = request.auth?.tenant
  if (!tenant || request.auth?.publishable) return
  const now = request.server.services.clock.now()
  const used = await request.server.services.store.usage.peek(tenant.id, usagePeriod(now)).catch(() => null)
  if (used === null) return
  reply.header('Quota-Limit', String(tenant.monthlyQuota))
  reply.header('Quota-Remaining', String(Math.max(0, tenant.monthlyQuota - used)))
  reply.header('Quota-Reset', String(Math.ceil((nextPeriodStart(now) - now) / 1000)))
}

/**
 * HTTP behaviour every client library expects: compression when asked, keyed answers never cached by
 * a shared cache, and the month's usage beside the rate-limit headers.
 */
export async function registerHttpConventions(app: FastifyInstance): Promise<void> {
  // Small answers are not worth the CPU; the scoring answer usually stays below the threshold.
  await app.register(compress, { global: true, threshold: 1024, encodings: ['br', 'gzip', 'deflate'] })
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.auth) {
      if (!reply.hasHeader('cache-control')) reply.header('Cache-Control', 'no-store')
      await quotaHeaders(request, reply)
    }
    return payload
  })
}
