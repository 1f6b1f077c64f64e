import { describe, expect, it } from 'vitest'
import { parsePhone, toRegion } from '../../../src/intel/phone/parse.js'

// Real allocations from the national plans; digits after the range prefix are arbitrary.
const valid: Array<[string, string, string, string, string]> = [
  // [label, input, e164, country, lineType]
  ['US fixed or mobile', '+1 202-456-1111', '+12024561111', 'US', 'fixed_line_or_mobile'],
  ['US toll-free', '+1 (800) 555-0199', '+18005550199', 'US', 'toll_free'],
  ['US personal (500)', '+1 500 555 0199', '+15005550199', 'US', 'personal_number'],
  ['UK mobile', '+44 7400 123456', '+447400123456', 'GB', 'mobile'],
  ['UK fixed (London)', '+44 20 7946 0958', '+442079460958', 'GB', 'fixed_line'],
  ['UK freephone', '+44 800 123 4567', '+448001234567', 'GB', 'toll_free'],
  ['UK VoIP (056)', '+44 56 1234 5678', '+445612345678', 'GB', 'voip'],
  ['DE mobile', '+49 170 1234567', '+491701234567', 'DE', 'mobile'],
  ['DE fixed (Berlin)', '+49 30 1234567', '+49301234567', 'DE', 'fixed_line'],
  ['DE freephone', '+49 800 1234567', '+498001234567', 'DE', 'toll_free'],
  ['FR mobile', '+33 6 12 34 56 78', '+33612345678', 'FR', 'mobile'],
  ['FR fixed (Paris)', '+33 1 42 68 53 00', '+33142685300', 'FR', 'fixed_line'],
  ['FR freephone', '+33 800 12 34 56', '+33800123456', 'FR', 'toll_free'],
  ['FR VoIP (09)', '+33 9 12 34 56 78', '+33912345678', 'FR', 'voip'],
  ['IN mobile', '+91 98765 43210', '+919876543210', 'IN', 'mobile'],
  ['IN fixed (Delhi)', '+91 11 2345 6789', '+911123456789', 'IN', 'fixed_line'],
  ['IN toll-free', '+91 1800 123 4567', '+9118001234567', 'IN', 'toll_free'],
  ['BR mobile', '+55 11 91234-5678', '+5511912345678', 'BR', 'mobile'],
  ['BR fixed (São Paulo)', '+55 11 2345-6789', '+551123456789', 'BR', 'fixed_line'],
  ['BR toll-free', '+55 800 123 4567', '+558001234567', 'BR', 'toll_free'],
  ['JP mobile', '+81 90-1234-5678', '+819012345678', 'JP', 'mobile'],
  ['JP fixed (Tokyo)', '+81 3-1234-5678', '+81312345678', 'JP', 'fixed_line'],
  ['JP toll-free (0120)', '+81 120-123-456', '+81120123456', 'JP', 'toll_free'],
  ['JP VoIP (050)', '+81 50-1234-5678', '+815012345678', 'JP', 'voip'],
  ['AU mobile', '+61 412 345 678', '+61412345678', 'AU', 'mobile'],
  ['AU fixed (Sydney)', '+61 2 9374 4000', '+61293744000', 'AU', 'fixed_line'],
  ['AU freecall', '+61 1800 123 456', '+611800123456', 'AU', 'toll_free'],
  ['NG mobile', '+234 803 123 4567', '+2348031234567', 'NG', 'mobile'],
  ['NG fixed (Lagos)', '+234 201 234 5678', '+2342012345678', 'NG', 'fixed_line'],
  ['NG toll-free', '+234 800 123 4567', '+2348001234567', 'NG', 'toll_free'],
]

describe('parsePhone: valid numbers', () => {
  it.each(valid)('%s', (_label, input, e164, country, lineType) => {
    expect(parsePhone(input)).toMatchObject({
      valid: true,
      possible: true,
      e164,
      country,
      lineType,
      rejectReason: null,
    })
  })

  it('splits the calling code from the national number', () => {
    expect(parsePhone('+234 803 123 4567')).toMatchObject({
      callingCode: '234',
      nationalNumber: '8031234567',
    })
  })

  it('gives a non-geographic number no country', () => {
    expect(parsePhone('+800 1234 5678')).toMatchObject({ valid: true, country: null, lineType: 'toll_free' })
  })
})

describe('parsePhone: national format', () => {
  const national: Array<[string, string, string]> = [
    ['(202) 456-1111', 'US', '+12024561111'],
    ['07400 123456', 'GB', '+447400123456'],
    ['030 1234567', 'DE', '+49301234567'],
    ['06 12 34 56 78', 'FR', '+33612345678'],
    ['011 2345 6789', 'IN', '+911123456789'],
    ['(11) 2345-6789', 'BR', '+551123456789'],
    ['03-1234-5678', 'JP', '+81312345678'],
    ['(02) 9374 4000', 'AU', '+61293744000'],
    ['0803 123 4567', 'NG', '+2348031234567'],
  ]

  it.each(national)('%s with hint %s', (input, country, e164) => {
    expect(parsePhone(input, country)).toMatchObject({ valid: true, e164, country })
  })

  it.each(national)('%s without a hint is invalid_country', (input) => {
    expect(parsePhone(input)).toMatchObject({ valid: false, e164: null, rejectReason: 'invalid_country' })
  })

  it('accepts a lower-case hint and reads UK as GB', () => {
    expect(parsePhone('07400 123456', 'gb').e164).toBe('+447400123456')
    expect(parsePhone('07400 123456', 'uk').e164).toBe('+447400123456')
  })

  it('ignores an unknown hint for international numbers but cannot read national ones with it', () => {
    expect(parsePhone('+44 20 7946 0958', 'ZZ')).toMatchObject({ valid: true, country: 'GB' })
    expect(parsePhone('020 7946 0958', 'ZZ').rejectReason).toBe('invalid_country')
  })

  it('lets an international number override the hint', () => {
    expect(parsePhone('+33 6 12 34 56 78', 'DE')).toMatchObject({ valid: true, country: 'FR' })
  })
})

describe('parsePhone: notation', () => {
  it.each([
    '+44 20 7946 0958',
    '+44-20-7946-0958',
    '+44.20.7946.0958',
    '+44 (0) 20 7946 0958',
    '  +442079460958  ',
    '0044 20 7946 0958',
    '00 44 20 7946 0958',
    '+44 20 7946 0958 ext. 123',
    '＋４４ ２０ ７９４６ ０９５８',
  ])('%s', (input) => {
    expect(parsePhone(input)).toMatchObject({ valid: true, e164: '+442079460958' })
  })

  it('reads 00 as international even where the hint country dials out with 011', () => {
    expect(parsePhone('0044 20 7946 0958', 'US')).toMatchObject({ valid: true, e164: '+442079460958' })
  })

  it("uses the hint country's own exit code", () => {
    expect(parsePhone('011 44 20 7946 0958', 'US').e164).toBe('+442079460958')
    expect(parsePhone('0011 44 7400 123456', 'AU').e164).toBe('+447400123456')
  })
})

describe('parsePhone: rejections', () => {
  const rejected: Array<[string, string | undefined, string]> = [
    ['hello', undefined, 'not_a_number'],
    ['', undefined, 'not_a_number'],
    ['+', undefined, 'not_a_number'],
    ['1-800-FLOWERS', 'US', 'not_a_number'],
    ['call +44 20 7946 0958 now', undefined, 'not_a_number'],
    ['+999 1234567', undefined, 'invalid_country'],
    ['020 7946 0958', undefined, 'invalid_country'],
    ['+1 202', undefined, 'too_short'],
    ['+49 30 1', undefined, 'too_short'],
    ['+33 6 12 34 56', undefined, 'too_short'],
    ['+1 2024561111999', undefined, 'too_long'],
    ['+33 6 12 34 56 78 9', undefined, 'too_long'],
    ['+44 1234 5678', undefined, 'invalid_length'],
  ]

  it.each(rejected)('%s (hint %s) → %s', (input, country, reason) => {
    const r = parsePhone(input, country)
    expect(r).toMatchObject({
      valid: false,
      possible: false,
      e164: null,
      lineType: null,
      rejectReason: reason,
    })
  })

  it('flags a plausible length in an unassigned range as invalid but keeps its E.164 form', () => {
    // 07700 900xxx is Ofcom's range reserved for drama, never issued to subscribers.
    expect(parsePhone('07700 900123', 'GB')).toMatchObject({
      valid: false,
      possible: true,
      e164: '+447700900123',
      lineType: null,
      rejectReason: 'invalid',
    })
    expect(parsePhone('+1 999 999 9999')).toMatchObject({
      valid: false,
      possible: true,
      rejectReason: 'invalid',
    })
  })

  it('rejects very long input instead of throwing', () => {
    expect(parsePhone('1'.repeat(300)).rejectReason).toBe('too_long')
  })
})

describe('toRegion', () => {
  it('normalises supported codes and drops the rest', () => {
    expect(toRegion(' de ')).toBe('DE')
    expect(toRegion('UK')).toBe('GB')
    expect(toRegion('XX')).toBeUndefined()
    expect(toRegion('')).toBeUndefined()
    expect(toRegion(undefined)).toBeUndefined()
  })
})
