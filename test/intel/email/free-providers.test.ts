import { describe, expect, it } from 'vitest'
import { getDisposableDomains } from '../../../src/intel/email/disposable.js'
import { FREE_PROVIDER_DOMAINS } from '../../../src/intel/email/free-provider-domains.js'
import { freeProviderCount, isFreeProvider } from '../../../src/intel/email/free-providers.js'

describe('free webmail providers', () => {
  it('flags the big free providers, including regional spellings', () => {
    for (const d of [
      'gmail.com',
      'yahoo.com',
      'hotmail.co.uk',
      'outlook.fr',
      'gmx.de',
      'mail.ru',
      'qq.com',
      'proton.me',
    ]) {
      expect(isFreeProvider(d), d).toBe(true)
    }
    expect(isFreeProvider('GMAIL.COM')).toBe(true)
  })

  it('does not flag company, ISP or look-alike domains', () => {
    for (const d of [
      'example.com',
      'acme-corp.com',
      'comcast.net',
      'yahoo.is',
      'gmail.co',
      'mailinator.com',
    ]) {
      expect(isFreeProvider(d), d).toBe(false)
    }
  })

  it('is a clean list: lower-case, unique, and disjoint from the disposable list', () => {
    expect(new Set(FREE_PROVIDER_DOMAINS).size).toBe(FREE_PROVIDER_DOMAINS.length)
    expect(freeProviderCount()).toBe(FREE_PROVIDER_DOMAINS.length)
    for (const d of FREE_PROVIDER_DOMAINS) expect(d).toMatch(/^[a-z0-9.-]+\.[a-z]{2,}$/)
    const disposable = getDisposableDomains()
    expect(FREE_PROVIDER_DOMAINS.filter((d) => disposable.has(d))).toEqual([])
  })
})
