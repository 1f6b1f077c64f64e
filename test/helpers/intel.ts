import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EmailIntel } from '../../src/intel/email/index.js'
import { importFeed } from '../../src/intel/feeds/update.js'
import { describeSources, type Intel } from '../../src/intel/index.js'
import { loadIpIntel } from '../../src/intel/ip/index.js'
import { getPhoneIntel } from '../../src/intel/phone/index.js'
import { timezoneCountries } from '../../src/intel/timezone.js'
import { LoopbackDns, type Zone } from './dns-server.js'

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'feeds')

/** Mail domains the loopback DNS knows; every other name is NXDOMAIN (a definite "no mail server"). */
export const DNS_ZONES: Record<string, Zone> = {
  // The resolver canary (VERDICT_DNS_CANARY's default): it must resolve, or no "no MX" answer is believed.
  'gmail.com': { MX: [{ preference: 5, exchange: 'gmail-smtp-in.l.google.com' }] },
  'example.com': { MX: [{ preference: 10, exchange: 'mx.example.com' }] },
  'acme-corp.com': { MX: [{ preference: 10, exchange: 'mx1.acme-corp.com' }] },
  'mailinator.com': { MX: [{ preference: 10, exchange: 'mail.mailinator.com' }] },
  'yopmail.com': { MX: [{ preference: 10, exchange: 'mx.yopmail.com' }] },
  'nullmx.example.com': { MX: [{ preference: 0, exchange: '.' }] },
  'a-only.example.com': { A: ['192.0.2.10'] },
  'slow.example.com': { silent: true },
  'broken.example.com': { rcode: 'SERVFAIL' },
}

export interface TestIntel {
  intel: Intel
  dns: LoopbackDns
  feedsDir: string
}

let shared: Promise<TestIntel> | undefined

/**
 * Real reference data, loaded once per test process: the packaged ASN/geo/phone/disposable data, feeds
 * imported from fixture files in their upstream formats, and MX lookups against a loopback DNS server.
 */
export function testIntel(): Promise<TestIntel> {
  shared ??= (async () => {
    const dns = new LoopbackDns(DNS_ZONES)
    await dns.start()
    const feedsDir = mkdtempSync(join(tmpdir(), 'verdict-feeds-'))
    const quiet = { dir: feedsDir, progress: () => {} }
    await importFeed('tor', join(FIXTURES, 'tor-bulk-exit-list.txt'), quiet)
    await importFeed('relay', join(FIXTURES, 'egress-ip-ranges.csv'), quiet)
    await importFeed('vpn', join(FIXTURES, 'vpn-operators.csv'), quiet)
    await importFeed('proxy', join(FIXTURES, 'firehol_proxies.netset'), quiet)
    // Generous: only the silent zone waits it out; an answer of the loopback server never comes near it,
    // however loaded the machine.
    const email = new EmailIntel({ mx: { servers: [dns.server], timeoutMs: 2_000 } })
    const ip = await loadIpIntel({ feedsDir })
    const phone = getPhoneIntel()
    const intel: Intel = {
      email,
      ip,
      phone,
      timezoneCountries,
      sources: () => describeSources(email, ip, phone),
    }
    return { intel, dns, feedsDir }
  })()
  return shared
}
