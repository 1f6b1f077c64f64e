import { describe, expect, it } from 'vitest'
import {
  newDeviceIdentity,
  signDeviceToken,
  TOKEN_VALIDITY_MS,
  verifyDeviceToken,
} from '../../src/services/devices/device-token.js'
import { Hasher } from '../../src/util/secrets.js'

const hasher = new Hasher('token-test-secret')
const T0 = Date.UTC(2026, 0, 15, 12, 0, 0)

describe('device token', () => {
  const identity = newDeviceIdentity()
  const token = signDeviceToken(hasher, 'tenant-a', identity, T0)

  it('is opaque and verifies for its tenant within 400 days', () => {
    expect(token).toMatch(/^dt1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
    expect(token).not.toContain('tenant-a')
    expect(verifyDeviceToken(hasher, 'tenant-a', token, T0)).toEqual({ ok: true, identity, issuedMs: T0 })
    expect(verifyDeviceToken(hasher, 'tenant-a', token, T0 + TOKEN_VALIDITY_MS).ok).toBe(true)
  })

  it('verifies a token signed at a fractional millisecond (a clock may report fractions)', () => {
    // Issue 27: the simulator's clock gave fractional times, and every token it was issued came back malformed.
    const at = T0 + 0.5745
    const t = signDeviceToken(hasher, 'tenant-a', identity, at)
    expect(verifyDeviceToken(hasher, 'tenant-a', t, at)).toEqual({ ok: true, identity, issuedMs: T0 })
  })

  it('is expired one millisecond after 400 days', () => {
    expect(TOKEN_VALIDITY_MS).toBe(400 * 86_400_000)
    expect(verifyDeviceToken(hasher, 'tenant-a', token, T0 + TOKEN_VALIDITY_MS + 1)).toEqual({
      ok: false,
      reason: 'expired',
    })
  })

  it("rejects another tenant's token and another secret's token as bad_signature", () => {
    expect(verifyDeviceToken(hasher, 'tenant-b', token, T0)).toEqual({ ok: false, reason: 'bad_signature' })
    const foreign = signDeviceToken(new Hasher('other-secret'), 'tenant-a', identity, T0)
    expect(verifyDeviceToken(hasher, 'tenant-a', foreign, T0)).toEqual({ ok: false, reason: 'bad_signature' })
  })

  it.each([
    '',
    'garbage',
    'dt1.abc',
    'dt2.abc.def',
    `${token}.x`,
    token.replace('dt1.', 'dt1..'),
    `dt1.${'a'.repeat(10)}.${'b'.repeat(42)}`,
    `dt1.a b.${'b'.repeat(43)}`,
  ])('rejects %j as malformed', (bad) => {
    expect(verifyDeviceToken(hasher, 'tenant-a', bad, T0)).toEqual({ ok: false, reason: 'malformed' })
  })

  it('accepts none of 5,000 single-byte tamperings of a valid token', () => {
    // A deterministic generator, so a failure reproduces.
    let seed = 0x2545f491
    const next = () => {
      seed ^= seed << 13
      seed ^= seed >>> 17
      seed ^= seed << 5
      return seed >>> 0
    }
    const bytes = Buffer.from(token, 'latin1')
    const reasons: Record<string, number> = {}
    let accepted = 0
    let tried = 0
    while (tried < 5000) {
      const copy = Buffer.from(bytes)
      const pos = next() % copy.length
      const value = next() % 256
      if (copy[pos] === value) continue
      copy[pos] = value
      tried++
      const r = verifyDeviceToken(hasher, 'tenant-a', copy.toString('latin1'), T0)
      if (r.ok) accepted++
      else reasons[r.reason] = (reasons[r.reason] ?? 0) + 1
    }
    expect(accepted).toBe(0)
    expect(tried).toBe(5000)
    expect((reasons['malformed'] ?? 0) + (reasons['bad_signature'] ?? 0)).toBe(5000)
    expect(reasons['bad_signature']).toBeGreaterThan(0)
  })

  it('mints distinct random identities', () => {
    const ids = new Set(Array.from({ length: 1000 }, newDeviceIdentity))
    expect(ids.size).toBe(1000)
  })
})
