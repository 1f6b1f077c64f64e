/**
 * Servers the benchmark drives, each in its own process so the load generator does not share a core
 * with them: `echo` is a bare Fastify validated JSON echo (the reference), `verdict` is the real app
 * on a fresh SQLite file. Prints `READY <port> <apiKey>` when listening.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import { buildApp } from '../src/app.js'
import { loadIntel } from '../src/intel/index.js'
import { createTenant } from '../src/services/tenants.js'
import { openStore } from '../src/store/index.js'
import { systemClock } from '../src/util/clock.js'
import { Hasher } from '../src/util/secrets.js'
import { startBenchDns } from './dns.js'

async function echo(): Promise<void> {
  const app = Fastify()
  app.post(
    '/echo',
    {
      schema: {
        body: {
          type: 'object',
          properties: { event: { type: 'string', maxLength: 64 } },
          required: ['event'],
        },
      },
    },
    async (req) => req.body,
  )
  app.get('/echo', async () => ({ ok: true }))
  app.post(
    '/echo-score',
    {
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['event'],
          properties: {
            event: { type: 'string', minLength: 1, maxLength: 64 },
            user_id: { type: 'string', maxLength: 256 },
            ip: { type: 'string', maxLength: 45 },
            email: { type: 'string', maxLength: 320 },
            device_id: { type: 'string', maxLength: 256 },
            event_country: { type: 'string', maxLength: 8 },
            timezone: { type: 'string', maxLength: 64 },
            device: { type: 'object' },
          },
        },
      },
    },
    async (req) => req.body,
  )
  await app.listen({ port: 0, host: '127.0.0.1' })
  const addr = app.server.address()
  process.stdout.write(`READY ${typeof addr === 'object' && addr ? addr.port : 0} -\n`)
}

async function verdict(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-bench-'))
  const store = await openStore({ kind: 'sqlite', file: join(dir, 'bench.db') })
  const dns = await startBenchDns()
  const intel = await loadIntel({ email: { mx: { servers: [dns.server] } } })
  const app = await buildApp({ store, clock: systemClock, hasher: new Hasher('bench-secret'), intel })
  const t = await createTenant(store, systemClock, {
    name: 'bench',
    rateLimit: 1_000_000_000,
    monthlyQuota: 1_000_000_000,
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const addr = app.server.address()
  process.stdout.write(`READY ${typeof addr === 'object' && addr ? addr.port : 0} ${t.apiKey}\n`)
}

const which = process.argv[2]
if (which === 'echo') await echo()
else if (which === 'verdict') await verdict()
else {
  process.stderr.write('usage: servers.js echo|verdict\n')
  process.exit(2)
}
