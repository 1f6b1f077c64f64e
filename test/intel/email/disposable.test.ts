import { describe, expect, it } from 'vitest'
import { DisposableDomains, getDisposableDomains } from '../../../src/intel/email/disposable.js'

// The largest webmail providers by user count; none may ever be called disposable.
const LARGEST_WEBMAIL = [
  'gmail.com',
  'googlemail.com',
  'outlook.com',
  'hotmail.com',
  'hotmail.co.uk',
  'hotmail.fr',
  'live.com',
  'msn.com',
  'yahoo.com',
  'yahoo.co.uk',
  'yahoo.co.jp',
  'ymail.com',
  'aol.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'gmx.com',
  'gmx.net',
  'gmx.de',
  'web.de',
  'yandex.ru',
  'yandex.com',
  'ya.ru',
  'mail.ru',
  'bk.ru',
  'list.ru',
  'inbox.ru',
  'rambler.ru',
  'zoho.com',
  'proton.me',
  'protonmail.com',
  'pm.me',
  'tutanota.com',
  'hushmail.com',
  'email.com',
  'mail.com',
  'qq.com',
  'foxmail.com',
  '163.com',
  '126.com',
  'sina.com',
  'naver.com',
  'daum.net',
  'hanmail.net',
  'rediffmail.com',
  'seznam.cz',
  'wp.pl',
  'o2.pl',
  'interia.pl',
  'libero.it',
  'orange.fr',
  'laposte.net',
  'free.fr',
  't-online.de',
  'ukr.net',
  'fastmail.com',
  'comcast.net',
  'att.net',
]

describe('disposable domains', () => {
  const list = getDisposableDomains()

  it('merges the three upstream lists into at least 160,000 domains', () => {
    const info = list.describe()
    console.log(
      `disposable domains: ${info.count} (removed as real providers: ${info.removedAsRealProviders})`,
      info.sources.map((s) => `${s.name}@${s.version} ${s.license} ${s.count}`).join('; '),
    )
    expect(info.count).toBeGreaterThanOrEqual(160_000)
    expect(info.sources.map((s) => s.name)).toEqual([
      'disposable-domains',
      '@dahoom/disposable-email',
      'mailchecker',
    ])
    for (const s of info.sources) {
      expect(s.version).toMatch(/^\d+\.\d+\.\d+/)
      expect(s.license).toBe('MIT')
      expect(s.count).toBeGreaterThan(10_000)
    }
    // The merged set is larger than any single list, so the merge really happened.
    expect(info.count).toBeGreaterThan(Math.max(...info.sources.map((s) => s.count)))
  })

  it('flags well-known temp-mail domains', () => {
    for (const d of [
      'mailinator.com',
      'guerrillamail.com',
      '10minutemail.com',
      'yopmail.com',
      'temp-mail.org',
    ]) {
      expect(list.has(d), d).toBe(true)
    }
  })

  it('matches subdomains of a listed domain, case-insensitively', () => {
    expect(list.has('x.y.mailinator.com')).toBe(true)
    expect(list.has('Inbox.YOPMAIL.com')).toBe(true)
    expect(list.has('wikipedia.org')).toBe(false)
    expect(list.has('mailinator.com.wikipedia.org')).toBe(false)
  })

  it('never flags the largest webmail providers, nor their subdomains', () => {
    const flagged = LARGEST_WEBMAIL.filter((d) => list.has(d))
    expect(flagged).toEqual([])
    expect(list.has('mx.gmail.com')).toBe(false)
  })

  it('does not climb into a public suffix', () => {
    const custom = new DisposableDomains([
      { name: 't', version: '1.0.0', license: 'MIT', domains: ['edu.pl', 'spam.example', 'gmail.com'] },
    ])
    expect(custom.has('uw.edu.pl')).toBe(false)
    expect(custom.has('edu.pl')).toBe(true)
    expect(custom.has('a.spam.example')).toBe(true)
    expect(custom.has('gmail.com')).toBe(false)
    expect(custom.describe()).toMatchObject({ count: 2, removedAsRealProviders: 1 })
  })

  it('accepts Unicode entries and matches their punycode form', () => {
    const custom = new DisposableDomains([
      { name: 't', version: '1.0.0', license: 'MIT', domains: ['tëmp.example'] },
    ])
    expect(custom.has('xn--tmp-jma.example')).toBe(true)
    expect(custom.has('tëmp.example')).toBe(true)
  })
})
