import { REASON } from '../reasons.js'
import type { CheckFamily } from '../types.js'
import { fire } from './fire.js'
import { effectiveIpCountry } from './ip-risk.js'

/** The browser's time zone belongs to countries that do not include the IP's country. */
export const timezoneCheck: CheckFamily = (input) => {
  const tz = input.timezone
  const country = effectiveIpCountry(input)
  if (!tz?.countries || tz.countries.length === 0 || !country) return []
  if (tz.countries.includes(country)) return []
  return [
    fire('timezone_mismatch', {
      key: 'timezoneMismatch',
      weight: REASON.timezone_mismatch.fixedWeight,
      message: `The browser's time zone is used in ${tz.countries.slice(0, 3).join('/')}, but the IP address is in ${country}.`,
      evidence: { timezone: tz.zone, timezone_countries: tz.countries, ip_country: country },
    }),
  ]
}
