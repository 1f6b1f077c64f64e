import { describe, expect, it } from 'vitest'
import { loadSettings, parseTrustProxy } from '../../src/config/settings.js'

const secret = 'x'.repeat(32)

describe('TRUST_PROXY parsing', () => {
  it('reads off, true (one hop), hop counts and proxy lists', () => {
    for (const off of [undefined, '', 'false', '0', 'off', 'no']) expect(parseTrustProxy(off)).toBe(false)
    for (const one of ['true', 'TRUE', 'yes', 'on', '1']) expect(parseTrustProxy(one)).toBe(1)
    expect(parseTrustProxy('2')).toBe(2)
    expect(parseTrustProxy('10.0.0.1')).toEqual(['10.0.0.1'])
    expect(parseTrustProxy(' 10.0.0.0/8 , 2001:db8::/32,loopback ')).toEqual([
      '10.0.0.0/8',
      '2001:db8::/32',
      'loopback',
    ])
    expect(loadSettings({ TRUST_PROXY: 'true' }).trustProxy).toBe(1)
    expect(loadSettings({}).trustProxy).toBe(false)
  })

  it('refuses anything else with a message naming the variable', () => {
    for (const bad of [
      'maybe',
      '10.0.0.0/33',
      '10.0.0.1,',
      '2001:db8::/129',
      '-1',
      '1.5',
      '10.0.0.0/8/1',
      'proxy.local',
    ]) {
      expect(() => parseTrustProxy(bad), bad).toThrow(/TRUST_PROXY/)
      expect(() => loadSettings({ TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY/)
    }
  })
})

describe('VERDICT_SECRET strength', () => {
  it('refuses an empty or short secret, counting bytes, with a message naming the variable', () => {
    for (const bad of ['', 'short', 'x'.repeat(31), 'é'.repeat(15)]) {
      expect(() => loadSettings({ VERDICT_SECRET: bad }), JSON.stringify(bad)).toThrow(
        /VERDICT_SECRET.*32 bytes/,
      )
    }
    expect(loadSettings({ VERDICT_SECRET: secret }).secret).toBe(secret)
    // 16 two-byte characters are 32 bytes.
    expect(loadSettings({ VERDICT_SECRET: 'é'.repeat(16) }).secret).toBe('é'.repeat(16))
    expect(loadSettings({}).secret).toBeUndefined()
  })
})

describe('VERDICT_SHUTDOWN_MS', () => {
  it('defaults to 10 s and must be a non-negative integer', () => {
    expect(loadSettings({}).shutdownMs).toBe(10_000)
    expect(loadSettings({ VERDICT_SHUTDOWN_MS: '250' }).shutdownMs).toBe(250)
    expect(() => loadSettings({ VERDICT_SHUTDOWN_MS: 'soon' })).toThrow(/VERDICT_SHUTDOWN_MS/)
  })
})
