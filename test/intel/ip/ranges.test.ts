import { describe, expect, it } from 'vitest'
import { parseIp } from '../../../src/intel/ip/normalize.js'
import { formatCidr, type LabelledRange, parseCidr, RangeSet } from '../../../src/intel/ip/ranges.js'

const ip = (text: string) => parseIp(text)!

describe('parseCidr', () => {
  it('parses IPv4 and IPv6 prefixes and single addresses', () => {
    expect(parseCidr('10.1.2.0/24')).toEqual({ version: 4, start: 0x0a010200n, end: 0x0a0102ffn })
    expect(parseCidr('8.8.8.8')).toEqual({ version: 4, start: 0x08080808n, end: 0x08080808n })
    expect(parseCidr('2001:db8::/32')).toEqual({
      version: 6,
      start: 0x20010db8000000000000000000000000n,
      end: 0x20010db8ffffffffffffffffffffffffn,
    })
    expect(parseCidr('0.0.0.0/0')).toEqual({ version: 4, start: 0n, end: 0xffffffffn })
  })

  it('clears host bits below the prefix length', () => {
    expect(formatCidr(parseCidr('192.0.2.77/24')!)).toBe('192.0.2.0/24')
    expect(formatCidr(parseCidr('2001:db8::1/64')!)).toBe('2001:db8::/64')
  })

  it('maps an IPv4-mapped prefix onto IPv4', () => {
    expect(formatCidr(parseCidr('::ffff:192.0.2.0/120')!)).toBe('192.0.2.0/24')
    expect(parseCidr('::ffff:192.0.2.0/90')).toBeNull()
  })

  it.each(['', '1.2.3.4/33', '1.2.3.4/', '1.2.3.4/-1', '1.2.3.4/2x', '2001:db8::/129', 'x/24'])(
    'rejects %j',
    (t) => {
      expect(parseCidr(t)).toBeNull()
    },
  )

  it('accepts the notations parseIp accepts and rejects the rest', () => {
    expect(parseCidr('::ffff:c000:200/120')).toEqual(parseCidr('192.0.2.0/24'))
    expect(parseCidr('::ffff:192.0.2.9')).toEqual(parseCidr('192.0.2.9'))
    expect(parseCidr('fe80::1%eth0/64')).toEqual(parseCidr('fe80::/64'))
    expect(parseCidr('64:ff9b::192.0.2.33/128')).toEqual(parseCidr('64:ff9b::c000:221'))
    expect(parseCidr(' 1:2:3:4:5:6:7:: ')).toEqual(parseCidr('1:2:3:4:5:6:7:0'))
    for (const bad of [
      '01.2.3.4',
      '1.2.3.4.5',
      '1.2.3',
      '1..2.3',
      '256.0.0.0',
      '1:2:3:4:5:6:7:8::',
      ':::1',
      '1::2::3',
    ]) {
      expect(parseCidr(bad)).toBeNull()
    }
  })

  it('agrees with parseIp on single addresses', () => {
    let x = 7
    for (let i = 0; i < 500; i++) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0
      const v4 = `${x >>> 24}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`
      const v6 = `2001:${(x & 0xffff).toString(16)}::${(x >>> 16).toString(16)}:0:${i.toString(16)}`
      for (const text of [v4, v6]) {
        const p = parseIp(text)!
        expect(parseCidr(text)).toEqual({ version: p.version, start: p.value, end: p.value })
      }
    }
  })

  it('formats back to canonical CIDR text', () => {
    for (const t of [
      '0.0.0.0/0',
      '1.2.3.4/32',
      '100.64.0.0/10',
      '2a02:26f7:b3c0:4000::/64',
      '::/0',
      '2606:54c0:1a40::/45',
    ]) {
      expect(formatCidr(parseCidr(t)!)).toBe(t)
    }
  })
})

function ranges(list: [string, string | null][]): LabelledRange[] {
  return list.map(([cidr, label]) => ({ ...parseCidr(cidr)!, label }))
}

describe('RangeSet', () => {
  it('answers membership for IPv4 and IPv6 including the range bounds', () => {
    const set = new RangeSet(
      ranges([
        ['192.0.2.0/24', null],
        ['2001:db8:1::/48', null],
      ]),
    )
    expect(set.has(ip('192.0.2.0'))).toBe(true)
    expect(set.has(ip('192.0.2.255'))).toBe(true)
    expect(set.has(ip('192.0.3.0'))).toBe(false)
    expect(set.has(ip('192.0.1.255'))).toBe(false)
    expect(set.has(ip('2001:db8:1:ffff:ffff:ffff:ffff:ffff'))).toBe(true)
    expect(set.has(ip('2001:db8:2::'))).toBe(false)
    expect(set.has(ip('::ffff:192.0.2.9'))).toBe(true)
  })

  it('returns the label of the most specific block, and null for unnamed entries', () => {
    const set = new RangeSet(
      ranges([
        ['10.0.0.0/8', 'Outer'],
        ['10.1.0.0/16', 'Inner'],
        ['10.1.2.0/24', null],
      ]),
    )
    expect(set.match(ip('10.2.0.1'))).toBe('Outer')
    expect(set.match(ip('10.1.3.1'))).toBe('Inner')
    expect(set.match(ip('10.1.2.1'))).toBeNull()
    expect(set.match(ip('10.1.255.255'))).toBe('Inner')
    expect(set.match(ip('11.0.0.0'))).toBeUndefined()
  })

  it('prefers a named duplicate over an unnamed one whatever the order', () => {
    const a = new RangeSet(
      ranges([
        ['192.0.2.0/24', 'Named'],
        ['192.0.2.0/24', null],
      ]),
    )
    const b = new RangeSet(
      ranges([
        ['192.0.2.0/24', null],
        ['192.0.2.0/24', 'Named'],
      ]),
    )
    expect(a.match(ip('192.0.2.1'))).toBe('Named')
    expect(b.match(ip('192.0.2.1'))).toBe('Named')
  })

  it('merges adjacent and overlapping unnamed ranges', () => {
    const set = new RangeSet(
      ranges([
        ['192.0.2.0/25', null],
        ['192.0.2.128/25', null],
        ['192.0.2.0/24', null],
        ['2001:db8::/33', null],
        ['2001:db8:8000::/33', null],
      ]),
    )
    expect(set.entries).toBe(5)
    expect(set.segments).toBe(2)
  })

  it('agrees with a brute-force scan on random nested ranges (v4 and v6)', () => {
    // Deterministic PRNG so a failure is reproducible.
    let seed = 12345
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff
      return seed % n
    }
    const input: LabelledRange[] = []
    for (let i = 0; i < 300; i++) {
      const len = 16 + rnd(17)
      const label = rnd(3) === 0 ? null : `L${rnd(5)}`
      const v4 = parseCidr(`10.${rnd(4)}.${rnd(256)}.${rnd(256)}/${len}`)!
      input.push({ ...v4, label })
      const v6 = parseCidr(`2001:db8:${rnd(4).toString(16)}:${rnd(65536).toString(16)}::/${len + 32}`)!
      input.push({ ...v6, label })
    }
    const set = new RangeSet(input)
    // Reference: the smallest covering range wins; on equal size a named one, then the later one.
    const expected = (version: 4 | 6, value: bigint) => {
      let best: LabelledRange | undefined
      for (const r of input) {
        if (r.version !== version || value < r.start || value > r.end) continue
        const size = r.end - r.start
        const bestSize = best ? best.end - best.start : -1n
        if (!best || size < bestSize || (size === bestSize && (r.label !== null || best.label === null)))
          best = r
      }
      return best === undefined ? undefined : best.label
    }
    for (let i = 0; i < 2000; i++) {
      const a = ip(`10.${rnd(4)}.${rnd(256)}.${rnd(256)}`)
      expect(set.match(a)).toBe(expected(4, a.value))
      const b = ip(`2001:db8:${rnd(4).toString(16)}:${rnd(65536).toString(16)}::${rnd(65536).toString(16)}`)
      expect(set.match(b)).toBe(expected(6, b.value))
    }
  })

  it('is empty-safe', () => {
    const set = new RangeSet([])
    expect(set.has(ip('1.1.1.1'))).toBe(false)
    expect(set.has(ip('::1'))).toBe(false)
  })
})
