import { EmailIntel, type EmailIntelligence, type EmailIntelOptions } from './email/index.js'
import { type IpIntel, loadIpIntel } from './ip/index.js'
import { getPhoneIntel, type PhoneIntel } from './phone/index.js'
import { timezoneCountries } from './timezone.js'

/** One data source with its freshness, as /v1/health and `verdict feeds status` report it. */
export interface HealthSource {
  name: string
  kind: string
  loaded: boolean
  entries: number | null
  dataDate: string | null
  attribution: string | null
}

/** All reference intelligence, loaded once at start and held in memory. */
export interface Intel {
  email: EmailIntelligence
  ip: IpIntel
  phone: PhoneIntel
  timezoneCountries(zone: string): string[] | null
  /** Every data source with its freshness, for /v1/health and `verdict feeds status`. */
  sources(): HealthSource[]
}

export interface IntelOptions {
  email?: EmailIntelOptions
  /** Directory of stored feeds (`settings.feeds.dir`). */
  feedsDir: string
  /** Load the DB-IP city database (about 135 MB in memory); default true. */
  city?: boolean
}

export function describeSources(email: EmailIntelligence, ip: IpIntel, phone: PhoneIntel): HealthSource[] {
  const e = email.sources()
  const out: HealthSource[] = ip.sources().map((s) => ({
    name: s.name,
    kind: s.kind,
    loaded: s.loaded,
    entries: s.entries,
    dataDate: s.dataDate,
    attribution: s.attribution
      ? `${s.attribution}${s.attributionUrl ? ` (${s.attributionUrl})` : ''}`
      : s.licence,
  }))
  for (const d of e.disposable.sources) {
    out.push({
      name: `disposable-email: ${d.name}@${d.version}`,
      kind: 'package',
      loaded: true,
      entries: d.count,
      dataDate: null,
      attribution: d.license,
    })
  }
  out.push({
    name: 'disposable-email (merged)',
    kind: 'package',
    loaded: true,
    entries: e.disposable.count,
    dataDate: null,
    attribution: null,
  })
  out.push({
    name: 'free-email-providers',
    kind: 'curated',
    loaded: true,
    entries: e.freeProviders.count,
    dataDate: null,
    attribution: null,
  })
  for (const p of phone.sources()) {
    out.push({
      name: `${p.name}@${p.version ?? '?'}`,
      kind: 'package',
      loaded: p.loaded,
      entries: p.entries,
      dataDate: p.date,
      attribution: p.licence,
    })
  }
  return out
}

export async function loadIntel(options: IntelOptions): Promise<Intel> {
  const email = new EmailIntel(options.email)
  const ip = await loadIpIntel({
    feedsDir: options.feedsDir,
    ...(options.city !== undefined ? { city: options.city } : {}),
  })
  const phone = getPhoneIntel()
  return { email, ip, phone, timezoneCountries, sources: () => describeSources(email, ip, phone) }
}
