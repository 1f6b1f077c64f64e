import { describe, expect, it } from 'vitest'
import { normalizeDomain, parseEmail } from '../../../src/intel/email/syntax.js'

function reason(raw: string): string | null {
  const r = parseEmail(raw)
  return r.ok ? null : r.reason
}

describe('parseEmail', () => {
  it('splits a plain address and normalises the domain only', () => {
    expect(parseEmail('  John.Smith@Example.COM ')).toEqual({
      ok: true,
      local: 'John.Smith',
      domain: 'example.com',
      address: 'John.Smith@example.com',
    })
  })

  it('accepts IDN domains and stores them as punycode', () => {
    const r = parseEmail('anna@bücher.de')
    expect(r).toMatchObject({ ok: true, domain: 'xn--bcher-kva.de' })
    expect(parseEmail('user@例え.テスト')).toMatchObject({ ok: true, domain: 'xn--r8jz45g.xn--zckzah' })
  })

  it('accepts the special characters of a dot-atom and a trailing root dot', () => {
    expect(parseEmail("o'brien+tag/x=y@mail.example.org.")).toMatchObject({
      ok: true,
      domain: 'mail.example.org',
    })
    expect(parseEmail('josé@example.es')).toMatchObject({ ok: true, local: 'josé' })
  })

  it('reports empty and missing_at', () => {
    expect(reason('   ')).toBe('empty')
    expect(reason('john.smith.example.com')).toBe('missing_at')
  })

  it('reports local_empty', () => {
    expect(reason('@example.com')).toBe('local_empty')
  })

  it('reports local_too_long over 64 octets', () => {
    expect(reason(`${'a'.repeat(64)}@example.com`)).toBeNull()
    expect(reason(`${'a'.repeat(65)}@example.com`)).toBe('local_too_long')
    // 33 two-byte characters are 66 octets.
    expect(reason(`${'é'.repeat(33)}@example.com`)).toBe('local_too_long')
  })

  it('reports too_long when the whole address exceeds 254', () => {
    const label = 'a'.repeat(60)
    const domain = `${label}.${label}.${label}.${'b'.repeat(40)}.com`
    const fits = 254 - 1 - domain.length
    expect(`${'x'.repeat(fits)}@${domain}`).toHaveLength(254)
    expect(reason(`${'x'.repeat(fits)}@${domain}`)).toBeNull()
    expect(reason(`${'x'.repeat(fits + 1)}@${domain}`)).toBe('too_long')
  })

  it('reports bad_characters in the local part', () => {
    for (const raw of [
      'john smith@example.com',
      'john..smith@example.com',
      '.john@example.com',
      'john.@example.com',
      'a@b@example.com',
      'john(comment)@example.com',
      '"john smith"@example.com',
      'jo\u200bhn@example.com',
      'jo\thn@example.com',
    ]) {
      expect(reason(raw), raw).toBe('bad_characters')
    }
  })

  it('reports domain_invalid', () => {
    for (const raw of [
      'john@',
      'john@localhost',
      'john@example',
      'john@-example.com',
      'john@example-.com',
      'john@exa_mple.com',
      'john@exa mple.com',
      'john@example..com',
      'john@.example.com',
      'john@example.c',
      'john@example.123',
      'john@[192.0.2.1]',
      'john@192.0.2.1',
      `john@${'a'.repeat(64)}.com`,
    ]) {
      expect(reason(raw), raw).toBe('domain_invalid')
    }
  })
})

describe('normalizeDomain', () => {
  it('lower-cases, trims and punycodes', () => {
    expect(normalizeDomain(' GMAIL.com ')).toBe('gmail.com')
    expect(normalizeDomain('Bücher.DE')).toBe('xn--bcher-kva.de')
    expect(normalizeDomain('xn--bcher-kva.de')).toBe('xn--bcher-kva.de')
    expect(normalizeDomain('not a domain')).toBeNull()
  })
})
