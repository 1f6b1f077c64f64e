import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadSettings } from '../../../src/config/settings.js'
import { CatchAllProber } from '../../../src/intel/email/catch-all.js'
import { MxResolver } from '../../../src/intel/email/mx.js'
import { LoopbackDns } from '../../helpers/dns-server.js'
import { LoopbackSmtp, type SmtpMode } from './support/smtp-server.js'

const dns = new LoopbackDns({
  'catchall.example.net': { MX: [{ preference: 10, exchange: 'mx.catchall.example.net' }] },
  'mx.catchall.example.net': { A: ['127.0.0.1'] },
  'strict.example.net': { MX: [{ preference: 10, exchange: 'mx.strict.example.net' }] },
  'mx.strict.example.net': { A: ['127.0.0.1'] },
  'addr-only.example.net': { A: ['127.0.0.1'] },
  'nullmx.example.net': { MX: [{ preference: 0, exchange: '.' }] },
})

const servers = new Map<SmtpMode, LoopbackSmtp>()
const modes: SmtpMode[] = ['accept-all', 'reject-unknown', 'greylist', 'silent', 'busy', 'no-ehlo']

beforeAll(async () => {
  await dns.start()
  for (const m of modes) {
    const s = new LoopbackSmtp(m, ['alice@strict.example.net'])
    await s.start()
    servers.set(m, s)
  }
})
afterAll(async () => {
  await dns.stop()
  for (const s of servers.values()) await s.stop()
})

function prober(
  mode: SmtpMode,
  extra: { timeoutMs?: number; now?: () => number; allowPrivateHosts?: boolean } = {},
) {
  const mx = new MxResolver({ servers: [dns.server], timeoutMs: 500 })
  return new CatchAllProber(mx, {
    enabled: true,
    port: servers.get(mode)!.port,
    heloName: 'probe.verdict.test',
    allowPrivateHosts: true,
    timeoutMs: 2000,
    ...extra,
  })
}

describe('catch-all probe against loopback SMTP servers', () => {
  it('is off by default: not probed, catchAll false, no connection', async () => {
    const server = servers.get('accept-all')!
    const before = server.connections
    const off = new CatchAllProber(new MxResolver({ servers: [dns.server] }), { port: server.port })
    expect(off.enabled).toBe(false)
    expect(await off.check('catchall.example.net')).toEqual({
      catchAll: false,
      status: 'not_probed',
      probed: false,
      host: null,
      code: null,
      reason: 'probe_disabled',
    })
    expect(server.connections).toBe(before)
  })

  it('a server that accepts any recipient is catch-all; the dialogue is complete and polite', async () => {
    const server = servers.get('accept-all')!
    const start = server.commands.length
    const r = await prober('accept-all').check('catchall.example.net')
    expect(r).toEqual({
      catchAll: true,
      status: 'catch_all',
      probed: true,
      host: 'mx.catchall.example.net',
      code: 250,
      reason: 'rcpt_250',
    })
    const dialogue = server.commands.slice(start)
    expect(dialogue[0]).toBe('EHLO probe.verdict.test')
    expect(dialogue[1]).toBe('MAIL FROM:<>')
    expect(dialogue[2]).toMatch(/^RCPT TO:<verdict-nx-[0-9a-f]{16}@catchall\.example\.net>$/)
    expect(dialogue[3]).toBe('QUIT')
  })

  it('a server that rejects unknown recipients is not catch-all', async () => {
    const r = await prober('reject-unknown').check('strict.example.net')
    expect(r).toMatchObject({ catchAll: false, status: 'rejects_unknown', code: 550 })
  })

  it('uses the domain itself when it has only an address record', async () => {
    const r = await prober('accept-all').check('addr-only.example.net')
    expect(r).toMatchObject({ status: 'catch_all', host: 'addr-only.example.net' })
  })

  it('falls back to HELO when EHLO is refused', async () => {
    const server = servers.get('no-ehlo')!
    const start = server.commands.length
    expect(await prober('no-ehlo').check('catchall.example.net')).toMatchObject({ status: 'catch_all' })
    expect(server.commands.slice(start, start + 2)).toEqual([
      'EHLO probe.verdict.test',
      'HELO probe.verdict.test',
    ])
  })

  it('greylisting, a refusing banner and silence are unknown, never a verdict', async () => {
    expect(await prober('greylist').check('catchall.example.net')).toMatchObject({
      catchAll: false,
      status: 'unknown',
      code: 451,
    })
    expect(await prober('busy').check('catchall.example.net')).toMatchObject({
      status: 'unknown',
      reason: 'banner_554',
    })
    const silent = await prober('silent', { timeoutMs: 400 }).check('catchall.example.net')
    expect(silent).toMatchObject({ catchAll: false, status: 'unknown', reason: 'timeout' })
  })

  it('a domain without mail service is unknown', async () => {
    expect(await prober('accept-all').check('nullmx.example.net')).toMatchObject({
      status: 'unknown',
      reason: 'mx_none',
    })
  })

  it('refuses to knock on private addresses unless allowed', async () => {
    const server = servers.get('accept-all')!
    const before = server.connections
    const r = await prober('accept-all', { allowPrivateHosts: false }).check('catchall.example.net')
    expect(r).toMatchObject({ status: 'unknown', reason: 'no_public_address' })
    expect(server.connections).toBe(before)
  })

  it('caches per domain', async () => {
    const server = servers.get('accept-all')!
    let t = 1_000
    const p = prober('accept-all', { now: () => t })
    await p.check('catchall.example.net')
    const after = server.connections
    expect((await p.check('CATCHALL.Example.NET')).status).toBe('catch_all')
    expect(server.connections).toBe(after)
    t += 60 * 60_000 + 1
    await p.check('catchall.example.net')
    expect(server.connections).toBe(after + 1)
  })
})

describe('switch and guards', () => {
  it('reads VERDICT_SMTP_PROBE', () => {
    const probe = (env: Record<string, string>) => loadSettings(env).email.smtpProbe
    expect(probe({})).toBe(false)
    expect(probe({ VERDICT_SMTP_PROBE: '0' })).toBe(false)
    expect(probe({ VERDICT_SMTP_PROBE: '1' })).toBe(true)
    expect(probe({ VERDICT_SMTP_PROBE: 'true' })).toBe(true)
  })

  it('refuses MX hosts on special-purpose addresses and probes none of them', async () => {
    const dnsPrivate = new LoopbackDns({
      'internal.example.com': { MX: [{ preference: 10, exchange: 'mx.internal.example.com' }] },
      'mx.internal.example.com': { A: ['127.0.0.1'], AAAA: ['64:ff9b::7f00:1', '::ffff:127.0.0.1'] },
    })
    await dnsPrivate.start()
    try {
      const smtp = servers.get('accept-all')!
      const before = smtp.connections
      const p = new CatchAllProber(new MxResolver({ servers: [dnsPrivate.server], timeoutMs: 500 }), {
        enabled: true,
        port: smtp.port,
        timeoutMs: 2000,
      })
      expect(await p.check('internal.example.com')).toMatchObject({
        status: 'unknown',
        reason: 'no_public_address',
        probed: true,
      })
      expect(smtp.connections).toBe(before)
    } finally {
      await dnsPrivate.stop()
    }
  })
})
