import { describe, expect, it } from 'vitest'
import { formatIp, parseIp } from '../../../src/intel/ip/normalize.js'

describe('parseIp', () => {
  it('canonicalises IPv4 with /24 prefix, masked hint and numeric value', () => {
    expect(parseIp(' 203.0.113.77 ')).toEqual({
      ip: '203.0.113.77',
      version: 4,
      prefix: '203.0.113.0/24',
      hint: '203.0.113.x',
      value: 3405803853n,
    })
  })

  it('compresses and lower-cases IPv6 (RFC 5952) with a /48 prefix', () => {
    const p = parseIp('2001:0DB8:0001:0000:0000:0000:0000:0001')
    expect(p).toMatchObject({
      ip: '2001:db8:1::1',
      version: 6,
      prefix: '2001:db8:1::/48',
      hint: '2001:db8:1::x',
    })
    expect(p?.value).toBe(0x20010db8000100000000000000000001n)
  })

  it('compresses the longest zero run, leftmost on ties, and never a single zero group', () => {
    expect(parseIp('2001:db8:0:0:1:0:0:1')?.ip).toBe('2001:db8::1:0:0:1')
    expect(parseIp('2001:db8:0:1:1:1:1:1')?.ip).toBe('2001:db8:0:1:1:1:1:1')
    expect(parseIp('::')?.ip).toBe('::')
    expect(parseIp('::1')?.ip).toBe('::1')
  })

  it('treats IPv4-mapped IPv6 as the IPv4 address, in dotted and hex form', () => {
    const dotted = parseIp('::ffff:8.8.8.8')
    const hex = parseIp('::FFFF:0808:0808')
    expect(dotted).toEqual(parseIp('8.8.8.8'))
    expect(hex).toEqual(parseIp('8.8.8.8'))
    expect(dotted?.version).toBe(4)
  })

  it('keeps other IPv6 with an embedded dotted quad as IPv6', () => {
    expect(parseIp('64:ff9b::192.0.2.33')).toMatchObject({ ip: '64:ff9b::c000:221', version: 6 })
  })

  it('drops a zone index', () => {
    expect(parseIp('fe80::1%eth0')?.ip).toBe('fe80::1')
  })

  it('builds the /48 of addresses whose third group is zero', () => {
    expect(parseIp('2001:4860:0:1::8888')).toMatchObject({ prefix: '2001:4860::/48', hint: '2001:4860::x' })
  })

  it.each([
    '',
    'bogus',
    '1.2.3',
    '256.1.1.1',
    '01.2.3.4',
    '1.2.3.4/24',
    '1::2::3',
    '12345::1',
    '2001:db8::g',
    ':1:2:3:4:5:6:7',
  ])('rejects %j', (input) => {
    expect(parseIp(input)).toBeNull()
  })
})

describe('formatIp', () => {
  it('is the inverse of parseIp(...).value', () => {
    for (const text of [
      '0.0.0.0',
      '255.255.255.255',
      '8.8.8.8',
      '2001:4860:4860::8888',
      '::',
      'fe80::1:0:0:1',
    ]) {
      const p = parseIp(text)!
      expect(formatIp(p.value, p.version)).toBe(text)
    }
  })
})
