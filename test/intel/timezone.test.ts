import { describe, expect, it } from 'vitest'
import { timezoneCountries, timezoneMatchesCountry } from '../../src/intel/timezone.js'

describe('timezoneCountries', () => {
  it.each([
    ['America/New_York', ['US']],
    ['Asia/Kolkata', ['IN']],
    ['Asia/Tokyo', ['JP', 'AU']],
    ['America/Sao_Paulo', ['BR']],
    ['Australia/Sydney', ['AU']],
  ])('%s', (zone, countries) => {
    expect(timezoneCountries(zone)).toEqual(countries)
  })

  it.each([
    ['Asia/Calcutta', ['IN']],
    ['US/Eastern', ['US']],
    ['Europe/Kiev', ['UA']],
    ['America/Buenos_Aires', ['AR']],
    ['Asia/Saigon', ['VN']],
    ['GB', ['GB']],
    ['Japan', ['JP']],
  ])('knows the old alias %s', (zone, countries) => {
    expect(timezoneCountries(zone)).toEqual(countries)
  })

  it('lists every country a shared zone serves', () => {
    expect(timezoneCountries('Europe/Berlin')).toEqual(expect.arrayContaining(['DE', 'DK', 'NO', 'SE']))
    expect(timezoneCountries('Africa/Lagos')).toEqual(expect.arrayContaining(['NG', 'AO', 'CM']))
    expect(timezoneCountries('Europe/London')).toEqual(expect.arrayContaining(['GB', 'JE', 'GG', 'IM']))
  })

  it('ignores case and surrounding spaces', () => {
    expect(timezoneCountries(' asia/KOLKATA ')).toEqual(['IN'])
  })

  it.each(['UTC', 'Etc/UTC', 'Etc/GMT+5', 'GMT', 'Zulu', 'CET', 'EST', 'EST5EDT', 'PST8PDT'])(
    '%s belongs to no country',
    (zone) => {
      expect(timezoneCountries(zone)).toEqual([])
    },
  )

  it.each(['Mars/Olympus_Mons', '', '+05:30', 'America/NewYork'])('%s is unknown', (zone) => {
    expect(timezoneCountries(zone)).toBeNull()
  })

  it('returns a fresh array each time', () => {
    timezoneCountries('Asia/Kolkata')?.push('XX')
    expect(timezoneCountries('Asia/Kolkata')).toEqual(['IN'])
  })
})

describe('timezoneMatchesCountry', () => {
  it('matches the zone’s own countries, aliases included', () => {
    expect(timezoneMatchesCountry('America/New_York', 'US')).toBe(true)
    expect(timezoneMatchesCountry('Asia/Calcutta', 'in')).toBe(true)
    expect(timezoneMatchesCountry('US/Eastern', 'US')).toBe(true)
    expect(timezoneMatchesCountry('Europe/Berlin', 'SE')).toBe(true)
  })

  it('reports a different country as a mismatch', () => {
    expect(timezoneMatchesCountry('Asia/Kolkata', 'US')).toBe(false)
    expect(timezoneMatchesCountry('Europe/Berlin', 'FR')).toBe(false)
    expect(timezoneMatchesCountry('America/New_York', 'CA')).toBe(false)
  })

  it('cannot tell for country-less or unknown zones, or a malformed country', () => {
    expect(timezoneMatchesCountry('UTC', 'US')).toBeNull()
    expect(timezoneMatchesCountry('Etc/GMT-3', 'RU')).toBeNull()
    expect(timezoneMatchesCountry('EST', 'US')).toBeNull()
    expect(timezoneMatchesCountry('Mars/Olympus_Mons', 'US')).toBeNull()
    expect(timezoneMatchesCountry('Asia/Kolkata', 'IND')).toBeNull()
    expect(timezoneMatchesCountry('Asia/Kolkata', '')).toBeNull()
  })
})
