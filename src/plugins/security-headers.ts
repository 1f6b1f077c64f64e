import type { FastifyInstance } from 'fastify'

/** No sniffing, no framing, no referrer leaving the page: what docs/console.md promises. */
const HARDENING = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
}

/**
 * The hardening headers on the console's JSON API and the /docs page, errors included (set before the
 * route runs). Console API answers are never stored by a cache: they are a signed-in user's data, and
 * a created or rotated key is a new secret. The console's page and assets set their own
 * (src/routes/console-static.ts).
 */
export function registerSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    const url = request.url
    if (url.startsWith('/console/api/')) reply.headers({ ...HARDENING, 'cache-control': 'no-store' })
    else if (url === '/docs' || url.startsWith('/docs/') || url.startsWith('/docs?')) reply.headers(HARDENING)
    done()
  })
}
