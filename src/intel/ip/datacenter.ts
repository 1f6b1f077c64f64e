/**
 * Hosting / datacenter detection from three signals, strongest first:
 * 1. a provider CIDR list (the `datacenter` feed), optionally naming the provider per range;
 * 2. a curated table of cloud and hosting AS numbers;
 * 3. words in the AS organisation name that only hosting companies use.
 */

export interface DatacenterResult {
  isDatacenter: boolean
  provider: string | null
}

/**
 * Curated AS numbers of cloud and hosting networks. Every entry was checked against the AS
 * organisation in the bundled ASN data. Google's AS15169 is included on purpose: it carries Google's
 * own services and older Google Cloud ranges, and no consumer access network egresses from it, so
 * traffic from it is machine or Google-proxied traffic, never a home connection.
 */
const HOSTING: ReadonlyArray<readonly [string, readonly number[]]> = [
  ['Amazon Web Services', [16509, 14618, 8987, 7224, 38895, 62785]],
  ['Google Cloud', [396982, 214609]],
  ['Google', [15169, 19527, 36040, 36492, 43515, 139070]],
  ['Microsoft Azure', [8075, 8068, 8069, 12076]],
  ['Oracle Cloud', [31898]],
  ['DigitalOcean', [14061]],
  ['Akamai Connected Cloud (Linode)', [63949]],
  ['Akamai', [20940, 16625]],
  ['Vultr', [20473]],
  ['OVHcloud', [16276, 35540]],
  ['Hetzner', [24940, 213230, 212317]],
  ['Scaleway', [12876]],
  ['Contabo', [51167, 141995, 40021]],
  ['Alibaba Cloud', [45102, 37963, 134963]],
  ['Tencent Cloud', [132203, 45090, 133478]],
  ['Huawei Cloud', [136907, 55990]],
  ['IBM Cloud', [36351]],
  ['Leaseweb', [60781, 16265, 28753, 30633, 59253, 7203, 19148, 395954]],
  ['M247', [9009]],
  ['DataCamp (CDN77)', [60068, 212238]],
  // AS132892 announces only parts of Cloudflare's published proxy ranges; Workers' cross-zone
  // subrequests come from one of its addresses (2a06:98c0:3600::103), so it must read as hosting.
  ['Cloudflare', [13335, 209242, 132892]],
  ['Fastly', [54113]],
  ['Gcore', [199524]],
  ['Zenlayer', [21859]],
  ['Equinix Metal', [54825]],
  ['Rackspace', [19994, 27357, 33070]],
  ['Hostinger', [47583]],
  ['IONOS', [8560]],
  ['Strato', [6724]],
  ['netcup', [197540]],
  ['UpCloud', [202053]],
  ['Aruba', [31034]],
  ['Selectel', [49505]],
  ['Timeweb', [9123]],
  ['Yandex Cloud', [200350]],
  ['Servers.com', [7979]],
  ['HostPapa', [36352, 54290]],
  ['Psychz Networks', [40676]],
  ['QuadraNet', [8100]],
  ['Sharktech', [46844]],
  ['Hivelocity', [29802]],
  ['Kamatera', [36007]],
  ['GoDaddy', [26496]],
  ['Namecheap', [22612]],
  ['DreamHost', [26347]],
  ['FranTech (BuyVM)', [53667]],
  ['Voxility', [3223]],
  ['Clouvider', [62240]],
  ['HostRoyale', [203020]],
  ['Limestone Networks', [46475]],
  ['WholeSale Internet', [32097]],
  ['Tier.Net', [397423]],
  ['velia.net', [29066]],
  ['Kingsoft Cloud', [59019]],
  ['NAVER Cloud', [23576]],
  ['iomart', [20860]],
]

export const HOSTING_ASNS: ReadonlyMap<number, string> = new Map(
  HOSTING.flatMap(([name, asns]) => asns.map((asn) => [asn, name] as const)),
)

/** Provider name for a curated hosting AS, or null. */
export function hostingProviderForAsn(asn: number | null | undefined): string | null {
  return asn == null ? null : (HOSTING_ASNS.get(asn) ?? null)
}

// Words that on their own mark a hosting business.
const STRONG =
  /\b(hosting|webhosting|data ?cent(?:er|re)s?|datacent(?:er|re)s?|vps|vds|colo|colocation|co-location|dedicated servers?|servers?|server ?farm)\b/i
// Words hosting companies use but some access networks do too ("The Cloud Networks" is public
// Wi-Fi, "White Cloud Communications" a fibre ISP): they count only without an access-network word.
const WEAK = /\b(cloud|host|hosts|hosted|compute|computing|web services)\b/i
const ACCESS =
  /\b(broadband|cable|cablevision|fib(?:er|re)|wireless|wi-?fi|mobile|cellular|telecom|telecommunications?|communications?|networks?|networking|isp|dsl|satellite|telephone|telco)\b/i

/** True when an AS organisation name reads as a hosting / cloud / server business. */
export function orgLooksLikeHosting(org: string | null | undefined): boolean {
  if (!org) return false
  if (STRONG.test(org)) return true
  return WEAK.test(org) && !ACCESS.test(org)
}

export interface DatacenterInput {
  asn: number | null
  org: string | null
  /** Match in the datacenter feed: undefined = no match, null = listed without a name, string = provider. */
  feed?: string | null | undefined
}

export function classifyDatacenter(input: DatacenterInput): DatacenterResult {
  const curated = hostingProviderForAsn(input.asn)
  if (input.feed !== undefined) return { isDatacenter: true, provider: input.feed ?? curated ?? input.org }
  if (curated) return { isDatacenter: true, provider: curated }
  if (orgLooksLikeHosting(input.org)) return { isDatacenter: true, provider: input.org }
  return { isDatacenter: false, provider: null }
}
