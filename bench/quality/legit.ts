/** The legitimate populations: each function adds one customer (or one group of them) to the world. */
import { RELAY_PREFIXES, VPN_OWN_ASNS, VPN_RENTED_ASNS, ZSCALER_ASNS } from './networks.js'
import { type Country, localPart, type Name, nameIn, pickCountry, relayAddress } from './people.js'
import {
  commonIphone,
  commonMac,
  DAY,
  DAYS,
  Device,
  MINUTE,
  RFP_FP,
  uniqueFp,
  WARMUP_DAYS,
  type World,
} from './world.js'

export interface Person {
  id: string
  country: Country
  name: Name
  email: string
  zone: string
  /** Has history from before the measured days (an established account). */
  established: boolean
}

/** Everyone created, for the attacks that target real accounts. */
export const registry: Person[] = []

export function newPerson(w: World, c = pickCountry(w.rng), email?: string): Person {
  const name = nameIn(w.rng, c)
  const p: Person = {
    id: w.id('cus'),
    country: c,
    name,
    email: email ?? `${localPart(w.rng, name)}@${w.rng.pick(c.mail)}`,
    zone: w.rng.pick(c.zones),
    established: w.rng.chance(0.6),
  }
  registry.push(p)
  return p
}

type Kind = 'iphone' | 'mac' | 'android' | 'windows'

/** A personal device: Apple devices often share a fingerprint with strangers of the same model. */
export function personalDevice(
  w: World,
  zone: string,
  kind: Kind = w.rng.weighted([
    ['iphone', 3],
    ['mac', 1],
    ['android', 3],
    ['windows', 3],
  ]),
): Device {
  const r = w.rng
  let fp = uniqueFp(r)
  if (kind === 'iphone' && r.chance(0.5)) fp = commonIphone(r, zone)
  if (kind === 'mac' && r.chance(0.4)) fp = commonMac(r, zone)
  return new Device(fp, 0.93)
}

interface VisitOpts {
  pop: string
  p: Person
  device: Device
  ip: () => string
  zone?: () => string
  eventCountry?: string
  /** Local hours of activity. */
  hours?: [number, number]
  day: number
  first?: boolean
}

/** One visit: a signup or a login, sometimes followed by a checkout a few minutes later. */
export function visit(w: World, o: VisitOpts): void {
  const [lo, hi] = o.hours ?? [7, 23]
  const t = w.at(o.day, o.p.zone, lo, hi)
  const ip = o.ip()
  const base = {
    user_id: o.p.id,
    email: o.p.email,
    ip,
    device_id: o.device.fp,
    timezone: o.zone ? o.zone() : o.p.zone,
    event_country: o.eventCountry ?? o.p.country.code,
    ...(o.device.flags ? { device: o.device.flags } : {}),
  }
  const ev = { label: 0 as const, pop: o.pop, actor: o.p.id, device: o.device }
  w.emit({ ...ev, t, row: { event: o.first ? 'signup' : 'login', ...base } })
  if (w.rng.chance(0.35))
    w.emit({ ...ev, t: t + w.rng.between(2, 25) * MINUTE, row: { event: 'checkout', ...base } })
}

/** The days a customer is active: a signup day for new ones, earlier visits for established ones. */
export function schedule(w: World, p: Person, visits: number): { day: number; first: boolean }[] {
  if (p.established) {
    const warm = Array.from({ length: w.rng.between(1, 2) }, () => ({
      day: w.rng.int(WARMUP_DAYS),
      first: false,
    }))
    return [...warm, ...w.days(visits, WARMUP_DAYS).map((day) => ({ day, first: false }))]
  }
  const start = w.rng.int(DAYS - 1)
  return [{ day: start, first: true }, ...w.days(visits - 1, start).map((day) => ({ day, first: false }))]
}

function simple(
  w: World,
  pop: string,
  p: Person,
  device: Device,
  ip: () => string,
  visits: number,
  extra: Partial<VisitOpts> = {},
): void {
  for (const s of schedule(w, p, visits))
    visit(w, { pop, p, device, ip, day: s.day, first: s.first, ...extra })
}

export function home(w: World): void {
  const p = newPerson(w)
  const ip = w.homeIp(p.country)
  const laptop = personalDevice(w, p.zone)
  const phone = personalDevice(w, p.zone, w.rng.chance(0.5) ? 'iphone' : 'android')
  for (const s of schedule(w, p, w.rng.between(2, 6))) {
    const mobile = w.rng.chance(0.25)
    visit(w, {
      pop: 'home',
      p,
      device: mobile ? phone : laptop,
      ip: mobile ? () => w.mobileIp(p.country) : () => ip,
      day: s.day,
      first: s.first,
    })
  }
}

/** 2-4 people behind one router; many families share one computer, each with their own account. */
export function household(w: World): void {
  const c = pickCountry(w.rng)
  const ip = w.homeIp(c)
  const zone = w.rng.pick(c.zones)
  const shared = w.rng.chance(0.4) ? personalDevice(w, zone, w.rng.chance(0.5) ? 'windows' : 'mac') : null
  const lastName = nameIn(w.rng, c).last
  for (let i = w.rng.between(2, 4); i > 0; i--) {
    const p = newPerson(w, c)
    p.name.last = lastName
    p.zone = zone
    const own = personalDevice(w, p.zone)
    for (const s of schedule(w, p, w.rng.between(2, 5))) {
      visit(w, {
        pop: 'household',
        p,
        device: shared && w.rng.chance(0.6) ? shared : own,
        ip: () => ip,
        day: s.day,
        first: s.first,
      })
    }
  }
}

export function mobile(w: World): void {
  const p = newPerson(w)
  const phone = personalDevice(w, p.zone, w.rng.chance(0.55) ? 'iphone' : 'android')
  simple(w, 'mobile_cgnat', p, phone, () => w.mobileIp(p.country), w.rng.between(2, 7))
}

/** A company's laptop images: one to three hardware models installed from one image. */
function fleet(w: World): string[] {
  return Array.from({ length: w.rng.between(1, 3) }, () => uniqueFp(w.rng))
}

/** One office behind a NAT: a laptop image gives every employee the same fingerprint. */
export function corporate(w: World): void {
  const c = pickCountry(w.rng)
  const ip = w.homeIp(c)
  const ip2 = ip.replace(/\.\d+$/, `.${1 + w.rng.int(254)}`)
  const zone = w.rng.pick(c.zones)
  const images = fleet(w)
  for (let i = w.rng.between(12, 45); i > 0; i--) {
    const p = newPerson(w, c)
    p.zone = zone
    const laptop = new Device(w.rng.chance(0.25) ? uniqueFp(w.rng) : w.rng.pick(images), 0.9)
    for (const s of schedule(w, p, w.rng.between(2, 6))) {
      visit(w, {
        pop: 'corporate_nat',
        p,
        device: laptop,
        ip: () => (w.rng.chance(0.5) ? ip : ip2),
        day: s.day,
        first: s.first,
        hours: [8.5, 18],
      })
    }
  }
}

/** Several companies' staff leave through a cloud security proxy's shared egress. */
export function zscaler(w: World): void {
  const c = w.country(w.rng.pick(['US', 'DE', 'GB', 'FR', 'IN']))
  // The service's nearest data centre: in the staff's country when the data has one there.
  const node = (): string => {
    try {
      return w.nets.v4Addr(w.rng, ZSCALER_ASNS, 'any', c.code)
    } catch {
      return w.nets.v4Addr(w.rng, ZSCALER_ASNS, 'any')
    }
  }
  const egress = Array.from({ length: 4 }, node)
  const images = fleet(w)
  const zone = w.rng.pick(c.zones)
  for (let i = w.rng.between(10, 30); i > 0; i--) {
    const p = newPerson(w, c)
    p.zone = zone
    const laptop = new Device(w.rng.chance(0.25) ? uniqueFp(w.rng) : w.rng.pick(images), 0.9)
    simple(w, 'zscaler', p, laptop, () => w.rng.pick(egress), w.rng.between(2, 6), { hours: [8.5, 18] })
  }
}

/** A trip abroad: hotel and café networks there; the phone follows the local time zone, the laptop not. */
export function traveller(w: World): void {
  const p = newPerson(w)
  p.established = true
  const home = w.homeIp(p.country)
  let dest = pickCountry(w.rng)
  while (dest.code === p.country.code) dest = pickCountry(w.rng)
  const laptop = personalDevice(w, p.zone, 'windows')
  const phone = personalDevice(w, p.zone, 'iphone')
  const tripStart = WARMUP_DAYS + w.rng.int(DAYS - WARMUP_DAYS - 3)
  const tripEnd = tripStart + w.rng.between(3, 7)
  const hotel = w.homeIp(dest)
  const destZone = w.rng.pick(dest.zones)
  for (const s of schedule(w, p, w.rng.between(4, 8))) {
    const away = s.day >= tripStart && s.day <= tripEnd
    const usePhone = w.rng.chance(0.5)
    visit(w, {
      pop: 'traveller',
      p,
      device: usePhone ? phone : laptop,
      ip: away ? () => (usePhone && w.rng.chance(0.5) ? w.mobileIp(dest) : hotel) : () => home,
      zone: () => (away && usePhone ? destZone : p.zone),
      day: s.day,
      first: s.first,
    })
  }
}

/** A phone roaming abroad: its traffic still leaves through the home carrier, the clock is local. */
export function roaming(w: World): void {
  const p = newPerson(w)
  p.established = true
  let dest = pickCountry(w.rng)
  while (dest.code === p.country.code) dest = pickCountry(w.rng)
  const phone = personalDevice(w, p.zone, w.rng.chance(0.5) ? 'iphone' : 'android')
  const tripStart = WARMUP_DAYS + w.rng.int(DAYS - WARMUP_DAYS - 2)
  const destZone = w.rng.pick(dest.zones)
  for (const s of schedule(w, p, w.rng.between(3, 7))) {
    const away = s.day >= tripStart && s.day <= tripStart + 5
    visit(w, {
      pop: 'roaming',
      p,
      device: phone,
      ip: () => w.mobileIp(p.country),
      zone: () => (away ? destZone : p.zone),
      day: s.day,
      first: s.first,
    })
  }
}

const VPN_EXIT_COUNTRIES = ['US', 'NL', 'DE', 'GB', 'SE', 'FR', 'CA', 'JP', 'AU', 'ES', 'IT', 'PL']

/** A consumer VPN user: most visits through an exit, at home or in a country they pick. */
export function vpnUser(w: World): void {
  const p = newPerson(w)
  const home = w.homeIp(p.country)
  const device = personalDevice(w, p.zone)
  const own = w.rng.chance(0.4)
  const asns = own ? VPN_OWN_ASNS : VPN_RENTED_ASNS
  const exitCountry = w.rng.chance(0.55) ? p.country.code : w.rng.pick(VPN_EXIT_COUNTRIES)
  const exit = (): string => {
    try {
      return w.nets.v4Addr(w.rng, asns, 'vpn', exitCountry)
    } catch {
      return w.nets.v4Addr(w.rng, asns, 'vpn')
    }
  }
  const exits = [exit(), exit()]
  simple(w, 'vpn_user', p, device, () => (w.rng.chance(0.75) ? w.rng.pick(exits) : home), w.rng.between(2, 6))
}

/** iCloud Private Relay: Apple devices, a new egress address of Akamai's or Cloudflare's relay per visit. */
export function icloudRelay(w: World): void {
  const p = newPerson(w)
  const device = personalDevice(w, p.zone, w.rng.chance(0.7) ? 'iphone' : 'mac')
  const akamai = w.rng.chance(0.5)
  const blocks = akamai ? RELAY_PREFIXES.akamai : RELAY_PREFIXES.cloudflare
  const pop = akamai ? 'icloud_relay_akamai' : 'icloud_relay_cloudflare'
  // Apple hands out an egress of the user's region; elsewhere only when its list has none there.
  const egress = (): string => {
    try {
      return w.nets.v4InRanges(w.rng, blocks, 'any', p.country.code)
    } catch {
      return w.nets.v4InRanges(w.rng, blocks, 'any')
    }
  }
  simple(w, pop, p, device, egress, w.rng.between(2, 6))
}

/** Signs up with an address of an e-mail relay (Hide My Email, DuckDuckGo, Firefox Relay, SimpleLogin). */
export function emailRelay(w: World): void {
  const c = pickCountry(w.rng)
  const name = nameIn(w.rng, c)
  const p = newPerson(w, c, relayAddress(w.rng, name))
  const ip = w.homeIp(c)
  simple(w, 'email_relay', p, personalDevice(w, p.zone), () => ip, w.rng.between(2, 6))
}

/** Apple devices of one model: the fingerprint is one of a handful shared by many strangers. */
export function identicalApple(w: World): void {
  const p = newPerson(w)
  const mac = w.rng.chance(0.35)
  const device = new Device(mac ? commonMac(w.rng, p.zone) : commonIphone(w.rng, p.zone), 0.9)
  const ip = mac ? w.homeIp(p.country) : null
  simple(w, 'identical_apple', p, device, () => ip ?? w.mobileIp(p.country), w.rng.between(2, 6))
}

/** Privacy-hardened browsers: uniform fingerprints reporting UTC, or one fingerprint per session; no cookies kept. */
export function privacyBrowser(w: World): void {
  const p = newPerson(w)
  const ip = w.homeIp(p.country)
  const rfp = w.rng.chance(0.5)
  const device = new Device(
    rfp ? RFP_FP : uniqueFp(w.rng),
    rfp ? 0 : 0.5,
    rfp ? { is_font_standardized: true } : undefined,
  )
  for (const s of schedule(w, p, w.rng.between(2, 6))) {
    if (!rfp) device.fp = uniqueFp(w.rng)
    visit(w, {
      pop: 'privacy_browser',
      p,
      device,
      ip: () => ip,
      zone: rfp ? () => 'UTC' : undefined,
      day: s.day,
      first: s.first,
    })
  }
}

/** A home on IPv6 with privacy extensions: a new address in the household's /64 every day. */
export function ipv6Home(w: World): void {
  const p = newPerson(w)
  const net = w.homeV6(p.country)
  let addr = net.next()
  let lastDay = -1
  const device = personalDevice(w, p.zone)
  for (const s of schedule(w, p, w.rng.between(2, 6))) {
    if (s.day !== lastDay) addr = net.next()
    lastDay = s.day
    visit(w, { pop: 'ipv6_home', p, device, ip: () => addr, day: s.day, first: s.first })
  }
}

/** Private windows or cookie cleaners: the device token never comes back. */
export function cookieLoss(w: World): void {
  const p = newPerson(w)
  const ip = w.homeIp(p.country)
  simple(w, 'cookie_loss', p, new Device(uniqueFp(w.rng), 0), () => ip, w.rng.between(2, 6))
}

export const LEGIT: ReadonlyArray<readonly [string, (w: World) => void, number]> = [
  ['home', home, 28],
  ['household', household, 8],
  ['mobile_cgnat', mobile, 12],
  ['corporate_nat', corporate, 8],
  ['zscaler', zscaler, 4],
  ['traveller', traveller, 5],
  ['roaming', roaming, 3],
  ['vpn_user', vpnUser, 6],
  ['icloud_relay', icloudRelay, 6],
  ['email_relay', emailRelay, 4],
  ['identical_apple', identicalApple, 6],
  ['privacy_browser', privacyBrowser, 3],
  ['ipv6_home', ipv6Home, 4],
  ['cookie_loss', cookieLoss, 3],
]

export { DAY }
