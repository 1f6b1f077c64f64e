import { VERDICT_ICON_SVG } from '../services/console/brand.js'
import {
  ASSET_CACHE,
  CONSOLE_CSP,
  consoleAsset,
  consoleIndex,
  HTML_CACHE,
} from '../services/console/console-assets.js'
import type { App } from './types.js'

/** Headers every console response carries: no framing, no sniffing, no referrer leaving the page. */
const HARDENING = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
}

/** The console's page and its content-hashed assets. Hash routes (#/events) keep this to one page. */
export function registerConsoleStatic(app: App): void {
  // The server's root is the console: a person typing the address lands on the sign-in page.
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/', 302))
  for (const path of ['/favicon.svg', '/favicon.ico'])
    app.get(path, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .headers({ 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' })
        .type('image/svg+xml')
        .send(VERDICT_ICON_SVG),
    )
  app.get('/console', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/', 308))
  app.get('/console/', { schema: { hide: true } }, async (request, reply) => {
    const inm = request.headers['if-none-match']
    const page = consoleIndex(typeof inm === 'string' ? inm : undefined)
    reply.headers({ ...HARDENING, 'cache-control': HTML_CACHE, etag: page.etag })
    if (page.body === null) return reply.code(304).send()
    return reply.type('text/html; charset=utf-8').send(page.body)
  })
  app.get<{ Params: { file: string } }>(
    '/console/assets/:file',
    { schema: { hide: true } },
    async (request, reply) => {
      const asset = consoleAsset(request.params.file)
      reply.headers({ ...HARDENING, 'cache-control': ASSET_CACHE })
      return reply.type(asset.type).send(asset.body)
    },
  )
}
