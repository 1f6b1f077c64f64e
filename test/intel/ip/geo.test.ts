import { beforeAll, describe, expect, it } from 'vitest'
import { GeoDb } from '../../../src/intel/ip/geo.js'
import { parseIp } from '../../../src/intel/ip/normalize.js'

describe('GeoDb on the bundled mmdb files', () => {
  let geo: GeoDb
  beforeAll(() => {
    geo = new GeoDb()
  })
  const at = (text: string) => geo.lookup(parseIp(text)!)

  it('gives country and city for IPv4', () => {
    expect(at('8.8.8.8')).toEqual({ country: 'US', city: 'Mountain View' })
    expect(at('81.2.69.142')).toEqual({ country: 'GB', city: 'London' })
    expect(at('79.200.1.1').country).toBe('DE')
  })

  it('gives country and city for IPv6', () => {
    expect(at('2a01:4f8::1')).toEqual({ country: 'DE', city: 'Nuremberg' })
    expect(at('2601:644::1').country).toBe('US')
  })

  it('drops the city when the city database places the range in another country', () => {
    // Registry data says US; DB-IP puts this anycast address in Canada.
    expect(at('2001:4860:4860::8888')).toEqual({ country: 'US', city: null })
  })

  it('answers IPv4-mapped IPv6 like the IPv4 address', () => {
    expect(at('::ffff:8.8.8.8')).toEqual(at('8.8.8.8'))
  })

  it('has nothing for private space', () => {
    expect(at('10.1.2.3')).toEqual({ country: null, city: null })
    expect(at('fd00::1')).toEqual({ country: null, city: null })
  })

  it('reports the build dates of both databases', () => {
    expect(geo.countryDate).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(geo.cityDate).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(geo.hasCity).toBe(true)
  })
})

describe('GeoDb without the city databases', () => {
  it('still answers the country', () => {
    const geo = new GeoDb({ city: false })
    expect(geo.hasCity).toBe(false)
    expect(geo.lookup(parseIp('8.8.8.8')!)).toEqual({ country: 'US', city: null })
  })
})
