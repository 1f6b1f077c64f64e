import { parseIp } from '../intel/ip/normalize.js'
import type { App, RouteDeps } from './types.js'

/** Paths no legitimate client of this API ever requests; scanners and bots probe them. */
export const TRAP_PATHS = [
  '/wp-login.php',
  '/wp-admin',
  '/xmlrpc.php',
  '/.env',
  '/.git/config',
  '/.aws/credentials',
  '/phpmyadmin',
  '/admin.php',
  '/config.php',
  '/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php',
  '/cgi-bin/luci',
  '/boaform/admin/formLogin',
] as const

/**
 * Abuse traps: answered exactly like any unknown path (404), but the caller's IP is recorded as a trap
 * hit (hashed, with its network prefix), which drives `abuse_ip` and `reputation.honeypot_hits`.
 */
export function registerTrapRoutes(app: App, deps: RouteDeps): void {
  for (const url of TRAP_PATHS) {
    app.route({
      method: ['GET', 'POST', 'HEAD', 'PUT'],
      url,
      config: { auth: 'none' },
      schema: { hide: true },
      handler: async (request, reply) => {
        const ip = parseIp(request.ip)
        if (ip) {
          await deps.store.network.addTrapHit(
            deps.hasher.entity('ip', ip.ip),
            ip.prefix,
            url,
            'http',
            deps.clock.now(),
          )
        }
        return reply.code(404).send({ error: `no route for ${request.method} ${url}` })
      },
    })
  }
}
