import { getAllTimezones } from 'countries-and-timezones'

// IANA zone names → ISO countries, from countries-and-timezones (built from the tz database's zone1970.tab
// and backward files). Deprecated links such as Asia/Calcutta or US/Eastern carry their own country list.

// Old POSIX-style names describe an offset and DST rule shared by many countries. Recent tz releases made
// them links to one city (CET → Europe/Brussels, EST → America/Panama), which would name the wrong country.
const OFFSET_STYLE = new Set('cet cst6cdt eet est est5edt hst met mst mst7mdt pst8pdt wet'.split(' '))

let byLowerName: Map<string, readonly string[]> | undefined

function zones(): Map<string, readonly string[]> {
  if (!byLowerName) {
    byLowerName = new Map()
    for (const zone of Object.values(getAllTimezones({ deprecated: true }))) {
      // Zone names are case-insensitive in practice (the tz files live on case-insensitive file systems too).
      const name = zone.name.toLowerCase()
      byLowerName.set(name, OFFSET_STYLE.has(name) ? [] : Object.freeze([...zone.countries]))
    }
  }
  return byLowerName
}

/**
 * Countries whose clocks a zone describes; `[]` for zones tied to no country (UTC, Etc/GMT+5, CET, EST5EDT, …) and null
 * for a name the database does not know. Some zones serve several countries, e.g. Europe/Berlin also
 * covers Denmark, Norway and Sweden since the tz database merged identical zones.
 */
export function timezoneCountries(zone: string): string[] | null {
  const countries = zones().get(zone.trim().toLowerCase())
  return countries ? [...countries] : null
}

/**
 * Whether `country` (ISO alpha-2) is one of the zone's countries. Null means "cannot tell": an unknown zone,
 * a zone that belongs to no country, or a country that is not two letters.
 */
export function timezoneMatchesCountry(zone: string, country: string): boolean | null {
  const code = country.trim().toUpperCase()
  if (!/^[A-Z]{2}$/.test(code)) return null
  const countries = zones().get(zone.trim().toLowerCase())
  if (!countries || countries.length === 0) return null
  return countries.includes(code)
}
