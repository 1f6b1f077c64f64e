import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createPhoneIntel, getPhoneIntel } from '../../../src/intel/phone/index.js'

const intel = createPhoneIntel()

describe('PhoneIntel.analyze', () => {
  it('returns every field for a valid mobile number', () => {
    expect(intel.analyze('07400 123456', 'GB')).toEqual({
      valid: true,
      possible: true,
      e164: '+447400123456',
      lineType: 'mobile',
      country: 'GB',
      isVoip: false,
      isDisposable: false,
      carrier: 'Three',
      rejectReason: null,
    })
  })

  it.each([
    ['+44 56 1234 5678', 'GB'],
    ['+33 9 12 34 56 78', 'FR'],
    ['+81 50-1234-5678', 'JP'],
  ])('marks %s as VoIP', (input, country) => {
    expect(intel.analyze(input)).toMatchObject({ valid: true, lineType: 'voip', isVoip: true, country })
  })

  it('does not call a mobile, fixed or toll-free number VoIP', () => {
    for (const input of ['+44 7400 123456', '+44 20 7946 0958', '+1 800 555 0199']) {
      expect(intel.analyze(input).isVoip).toBe(false)
    }
  })

  it('returns a rejection, not an exception, for odd input', () => {
    for (const input of ['', ' ', '+', '++44', 'null', '\u0000\u0001', '+44 20 7946 0958'.repeat(20), '🙂']) {
      const r = intel.analyze(input)
      expect(r.valid).toBe(false)
      expect(r.rejectReason).not.toBeNull()
      expect(r).toMatchObject({ isVoip: false, isDisposable: false, carrier: null })
    }
  })

  it('knows its carrier and disposable data', () => {
    expect(intel.carrierKnown).toBe(true)
    expect(intel.disposableKnown).toBe(true)
  })
})

describe('PhoneIntel without its data files', () => {
  const bare = createPhoneIntel({
    carrierDir: join(tmpdir(), 'verdict-no-such-dir'),
    disposableFile: join(tmpdir(), 'verdict-no-such-file.json'),
  })

  it('still validates and types numbers but says carrier and disposable are unknown', () => {
    expect(bare.carrierKnown).toBe(false)
    expect(bare.disposableKnown).toBe(false)
    expect(bare.analyze('+44 7400 123456')).toMatchObject({ valid: true, lineType: 'mobile', carrier: null })
    expect(bare.analyze('+1 201-201-8360').isDisposable).toBe(false)
  })

  it('reports the missing sources as not loaded', () => {
    const loaded = Object.fromEntries(bare.sources().map((s) => [s.id, s.loaded]))
    expect(loaded).toEqual({ 'phone-metadata': true, 'phone-carrier': false, 'phone-disposable': false })
  })
})

describe('PhoneIntel.sources', () => {
  it('names each data set with version, size and licence', () => {
    const sources = intel.sources()
    expect(sources).toHaveLength(3)
    for (const s of sources) {
      expect(s.loaded).toBe(true)
      expect(s.entries).toBeGreaterThan(200)
      expect(s.version).toMatch(/^\d+\.\d+\.\d+$/)
      expect(s.licence).not.toBe('')
    }
    const carrier = sources.find((s) => s.id === 'phone-carrier')
    expect(carrier?.licence).toContain('Apache-2.0')
    const disposable = sources.find((s) => s.id === 'phone-disposable')
    expect(disposable?.date).toMatch(/^\d{4}-\d{2}-\d{2}$/)
  })

  it('hands out copies', () => {
    const first = intel.sources()
    first[0]!.entries = -1
    expect(intel.sources()[0]!.entries).toBeGreaterThan(0)
  })
})

describe('getPhoneIntel', () => {
  it('returns one shared instance', () => {
    expect(getPhoneIntel()).toBe(getPhoneIntel())
  })
})
