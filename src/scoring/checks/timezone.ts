import type { CheckFamily } from '../types.js'
import { fire } from './fire.js'
import { effectiveIpCountry } from './ip-risk.js'

/**
 * The browser's time zone belongs to countries that do not include the IP's country. When the time zone
 * is that of the country the event was expected from and `geo_mismatch` already reports the IP elsewhere,
 * both codes would state one fact (the IP is not where the customer is): it is counted once, as
 * `geo_mismatch` (docs/scoring.md).
 */
export const timezoneCheck: CheckFamily = (input) => {
  const tz = input.timezone
  const country = effectiveIpCountry(input)
  if (!tz?.countries || tz.countries.length === 0 || !country) return []
  if (tz.countries.includes(country)) return []
  const expected = input.eventCountry?.toUpperCase() ?? null
  if (expected && expected !== country && tz.countries.includes(expected)) return []
  return [
    fire('timezone_mismatch', {
      key: 'timezoneMismatch',
      weight: input.config.weights.timezoneMismatch,
      message: `The browser's time zone is used in ${tz.countries.slice(0, 3).join('/')}, but the IP address is in ${country}.`,
      evidence: { timezone: tz.zone, timezone_countries: tz.countries, ip_country: country },
    }),
  ]
}
