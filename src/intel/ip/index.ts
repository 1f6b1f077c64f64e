import { resolve } from 'node:path'
import { FEED_NAMES } from '../feeds/catalog.js'
import { type LoadedFeeds, loadFeeds } from '../feeds/load.js'
import { AsnTable } from './asn.js'
import { classifyDatacenter } from './datacenter.js'
import { GeoDb } from './geo.js'
import { type IpVersion, type ParsedIp, parseIp } from './normalize.js'
import { RELAY_EGRESS, RELAY_EGRESS_DATE, RELAY_EGRESS_SET } from './relay-egress.js'
import { VPN_OPERATOR_NETWORKS, vpnOperatorOf } from './vpn-operators.js'

export interface IpIntelResult {
  /** Canonical address (IPv4-mapped IPv6 becomes the IPv4 address). */
  ip: string
  version: IpVersion
  /** /24 (IPv4) or /48 (IPv6) network, the only form of the address that may be stored. */
  prefix: string
  asn: number | null
  /** Organisation holding the AS. */
  org: string | null
  /** Same as `org`: no free offline ISP database exists, the AS holder is the closest stand-in. */
  isp: string | null
  country: string | null
  city: string | null
  isDatacenter: boolean
  datacenterProvider: string | null
  isTor: boolean
  isVpn: boolean
  /** VPN operator, only when a loaded list or the built-in operator table names it; never inferred. */
  vpnProvider: string | null
  isProxy: boolean
  isPrivacyRelay: boolean
  /**
   * Whether the list behind each signal is loaded. When false the matching `is*` flag is false only
   * because nothing is known, not because the address was checked and found clean. `vpn` is also true
   * for an address in a network of the built-in VPN operator table, and `relay` for an address in the
   * built-in relay egress table (a definite answer for that address); the tables are partial, so they
   * do not make `vpn` or `relay` known for other addresses.
   */
  known: { tor: boolean; vpn: boolean; proxy: boolean; relay: boolean }
}

export interface IntelSource {
  name: string
  kind: 'package' | 'feed' | 'curated'
  /** YYYY-MM-DD for packages (build date of the data); full ISO time of the fetch for feeds. */
  dataDate: string | null
  entries: number | null
  licence: string | null
  /** Text that must be shown where results are displayed, when the licence asks for it. */
  attribution: string | null
  attributionUrl: string | null
  /** Where a feed's data came from (URL or imported file). */
  source: string | null
  loaded: boolean
}

export interface IpIntel {
  /** Synchronous; null when `raw` is not an IP address. */
  lookup(raw: string): IpIntelResult | null
  /** The same for an address already parsed (`parseIp`): the scoring path parses it once. */
  lookupParsed(ip: ParsedIp): IpIntelResult
  /** Data sources with their dates, sizes, licences and load state (health endpoint, `feeds status`). */
  sources(): IntelSource[]
  /** Re-reads the stored feeds; the packaged ASN and geo data stay as loaded. */
  reload(): Promise<void>
  readonly feedsDir: string
}

export interface IpIntelOptions {
  /** Directory of stored feeds (`settings.feeds.dir`). */
  feedsDir: string
  /** Load the DB-IP city databases (about 135 MB); default true. */
  city?: boolean
}

const DBIP_ATTRIBUTION = 'IP geolocation by DB-IP'
const DBIP_URL = 'https://db-ip.com'

class LocalIpIntel implements IpIntel {
  readonly feedsDir: string
  private feeds: LoadedFeeds = {}
  private known = { tor: false, vpn: false, proxy: false, relay: false }

  constructor(
    private readonly asn: AsnTable,
    private readonly geo: GeoDb,
    feedsDir: string,
  ) {
    this.feedsDir = feedsDir
  }

  async reload(): Promise<void> {
    // Built completely before the swap (no await between the two assignments), so lookups never
    // see a half-loaded set.
    const f = await loadFeeds(this.feedsDir)
    this.feeds = f
    this.known = {
      tor: f.tor !== undefined,
      vpn: f.vpn !== undefined || f['vpn-asn'] !== undefined,
      proxy: f.proxy !== undefined || f['proxy-asn'] !== undefined,
      relay: f.relay !== undefined,
    }
  }

  lookup(raw: string): IpIntelResult | null {
    const ip = parseIp(raw)
    return ip ? this.lookupParsed(ip) : null
  }

  lookupParsed(ip: ParsedIp): IpIntelResult {
    const f = this.feeds
    const as = this.asn.lookup(ip)
    const asn = as?.asn ?? null
    const org = as?.org ?? null
    const { country, city } = this.geo.lookup(ip)

    // The built-in egress table (relay-egress.ts) answers on a fresh install; a loaded feed adds to it.
    const relayBuiltIn = RELAY_EGRESS_SET.has(ip)
    const isPrivacyRelay = relayBuiltIn || (f.relay?.ranges?.has(ip) ?? false)
    const isTor = f.tor?.ranges?.has(ip) ?? false
    const vpnRange = f.vpn?.ranges?.match(ip)
    const vpnAsn = asn === null ? undefined : f['vpn-asn']?.asns?.get(asn)
    const vpnOwn = vpnOperatorOf(asn, org)
    const proxyHit =
      (f.proxy?.ranges?.has(ip) ?? false) || (asn !== null && (f['proxy-asn']?.asns?.has(asn) ?? false))
    const dc = classifyDatacenter({ asn, org, feed: f.datacenter?.ranges?.match(ip) })

    const known = this.known
    // A relay egress is shared by ordinary users of the platform: it is reported only as a relay,
    // even though relay operators' networks also look like hosting or appear on VPN lists.
    const isVpn = !isPrivacyRelay && (vpnRange !== undefined || vpnAsn !== undefined || vpnOwn !== undefined)
    // One object literal with a fixed shape (no spreads): this runs on every request.
    return {
      ip: ip.ip,
      version: ip.version,
      prefix: ip.prefix,
      asn,
      org,
      isp: org,
      country,
      city,
      isDatacenter: !isPrivacyRelay && dc.isDatacenter,
      datacenterProvider: isPrivacyRelay ? null : dc.provider,
      isTor,
      isVpn,
      // A name from a loaded list wins over the built-in table's.
      vpnProvider: isVpn ? (vpnRange ?? vpnAsn ?? vpnOwn ?? null) : null,
      isProxy: !isPrivacyRelay && proxyHit,
      isPrivacyRelay,
      known: {
        tor: known.tor,
        vpn: known.vpn || vpnOwn !== undefined,
        proxy: known.proxy,
        relay: known.relay || relayBuiltIn,
      },
    }
  }

  sources(): IntelSource[] {
    const pkg = (s: Omit<IntelSource, 'kind' | 'source'>): IntelSource => ({
      ...s,
      kind: 'package',
      source: null,
    })
    const out: IntelSource[] = [
      pkg({
        name: 'asn',
        dataDate: this.asn.dataDate,
        entries: this.asn.v4Rows + this.asn.v6Rows,
        licence: 'CC BY 4.0',
        attribution: `AS data from RouteViews, NRO and DB-IP; ${DBIP_ATTRIBUTION}`,
        attributionUrl: DBIP_URL,
        loaded: true,
      }),
      pkg({
        name: 'geo-country',
        dataDate: this.geo.countryDate,
        entries: null,
        licence: 'CC0-1.0',
        attribution: 'Country data from ip-location-db (RIR registry data, NRO)',
        attributionUrl: 'https://github.com/sapics/ip-location-db',
        loaded: true,
      }),
      pkg({
        name: 'geo-city',
        dataDate: this.geo.cityDate,
        entries: null,
        licence: 'CC BY 4.0',
        attribution: DBIP_ATTRIBUTION,
        attributionUrl: DBIP_URL,
        loaded: this.geo.hasCity,
      }),
      {
        // Committed table of networks VPN operators hold themselves (src/intel/ip/vpn-operators.ts).
        name: 'vpn-operators',
        kind: 'curated',
        dataDate: null,
        entries: VPN_OPERATOR_NETWORKS.length,
        licence: null,
        attribution: null,
        attributionUrl: null,
        source: null,
        loaded: true,
      },
      {
        // Committed table of iCloud Private Relay egress blocks (src/intel/ip/relay-egress.ts).
        name: 'relay-egress',
        kind: 'curated',
        dataDate: RELAY_EGRESS_DATE,
        entries: RELAY_EGRESS.reduce((n, o) => n + o.prefixes.length, 0),
        licence: null,
        attribution: null,
        attributionUrl: null,
        source: 'https://mask-api.icloud.com/egress-ip-ranges.csv',
        loaded: true,
      },
    ]
    for (const name of FEED_NAMES) {
      const feed = this.feeds[name]
      out.push({
        name,
        kind: 'feed',
        dataDate: feed?.meta ? new Date(feed.meta.fetchedAt).toISOString() : null,
        entries: feed?.entries ?? 0,
        // Feeds come from wherever the operator points them; their terms are those of that source.
        licence: null,
        attribution: null,
        attributionUrl: null,
        source: feed?.meta?.source ?? null,
        loaded: feed !== undefined,
      })
    }
    return out
  }
}

/** Loads the ASN table, the geo databases and the stored feeds once. */
export async function loadIpIntel(options: IpIntelOptions): Promise<IpIntel> {
  const intel = new LocalIpIntel(
    new AsnTable(),
    new GeoDb({ city: options.city ?? true }),
    resolve(options.feedsDir),
  )
  await intel.reload()
  return intel
}
