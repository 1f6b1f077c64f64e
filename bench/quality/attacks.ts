/** The attacks: each function adds one campaign to the world. */

import { registry } from './legit.js'
import { ACCESS, HOSTING_ASNS, randomIid, v6InPrefix } from './networks.js'
import { COUNTRIES, type Country, localPart, nameIn, pickCountry } from './people.js'
import type { Rng } from './rng.js'
import {
  DAY,
  DAYS,
  Device,
  HOUR,
  MINUTE,
  type Row,
  START,
  uniqueFp,
  WARMUP_DAYS,
  type World,
} from './world.js'

const ATTACKER_ZONES = [
  'Europe/Moscow',
  'Asia/Ho_Chi_Minh',
  'Asia/Manila',
  'Africa/Lagos',
  'Asia/Jakarta',
  'Europe/Kiev',
  'Asia/Dhaka',
  'UTC',
]
const FREE_MAIL = ['gmail.com', 'outlook.com', 'hotmail.com', 'yahoo.com', 'mail.com', 'proton.me', 'gmx.com']
const DISPOSABLE = [
  'mailinator.com',
  'guerrillamail.com',
  '10minutemail.com',
  'yopmail.com',
  'sharklasers.com',
  'tempmail.plus',
]

function campaignStart(w: World): number {
  return START + (WARMUP_DAYS + w.rng.next() * (DAYS - WARMUP_DAYS - 0.5)) * DAY
}

function emit(w: World, pop: string, actor: string, t: number, device: Device | null, row: Row): void {
  w.emit({ t, label: 1, pop, actor, device, row })
}

function hostingIp(w: World): string {
  return w.nets.v4Addr(w.rng, HOSTING_ASNS, 'hosting')
}

function residentialProxy(w: World, c: Country = pickCountry(w.rng)): string {
  return w.nets.v4Addr(w.rng, ACCESS[c.code]!.home, 'residential', c.code)
}

/** A believable real-looking address for a fake account. */
function fakeRealEmail(w: World, c: Country): string {
  return `${localPart(w.rng, nameIn(w.rng, c))}@${w.rng.pick(FREE_MAIL)}`
}

/** Random mailbox names, the way account generators make them. */
export function machineMailbox(r: Rng): string {
  switch (r.int(4)) {
    case 0:
      return `${r.chars('abcdefghijklmnopqrstuvwxyz', r.between(8, 12))}${r.between(10, 9999)}`
    case 1:
      return r.chars('abcdefghijklmnopqrstuvwxyz0123456789', r.between(10, 16))
    case 2:
      return `${r.chars('bcdfghjklmnpqrstvwxz', 4)}${r.chars('aeiou', 1)}${r.chars('bcdfghjklmnpqrstvwxz', 3)}${r.between(100, 999)}`
    default:
      return `${r.chars('abcdefghijklmnopqrstuvwxyz', 6)}.${r.chars('abcdefghijklmnopqrstuvwxyz', 6)}${r.int(100)}`
  }
}

/** Scripted signups from hosting servers, in bursts. */
export function hostingFarm(w: World): void {
  const actor = w.id('farm')
  const ips = Array.from({ length: w.rng.between(1, 4) }, () => hostingIp(w))
  const zone = w.rng.pick(ATTACKER_ZONES)
  const claimed = pickCountry(w.rng)
  let t = campaignStart(w)
  const rotating = w.rng.chance(0.5)
  const fixed = uniqueFp(w.rng)
  for (let i = w.rng.between(15, 50); i > 0; i--) {
    t += w.rng.between(20, 240) * 1000
    const email = w.rng.chance(0.3)
      ? `${machineMailbox(w.rng)}@${w.rng.pick(DISPOSABLE)}`
      : fakeRealEmail(w, claimed)
    emit(w, 'hosting_signup_farm', actor, t, new Device(rotating ? uniqueFp(w.rng) : fixed, 0), {
      event: 'signup',
      user_id: w.id('u'),
      email,
      ip: w.rng.pick(ips),
      device_id: rotating ? uniqueFp(w.rng) : fixed,
      timezone: zone,
      event_country: claimed.code,
    })
  }
}

/** One person, one Gmail mailbox, many accounts through dots, tags and googlemail.com, each cashing a promo. */
export function promoAlias(w: World): void {
  const c = pickCountry(w.rng)
  const n = nameIn(w.rng, c)
  const base = `${n.first}${n.last}${w.rng.chance(0.5) ? w.rng.int(100) : ''}`
  const actor = w.id('promo')
  const device = new Device(uniqueFp(w.rng), 0.3)
  const ip = w.homeIp(c)
  const zone = w.rng.pick(c.zones)
  let t = campaignStart(w)
  const count = w.rng.between(4, 10)
  for (let i = 0; i < count; i++) {
    const dot = 1 + w.rng.int(base.length - 1)
    const local =
      i === 0
        ? base
        : w.rng.chance(0.5)
          ? `${base.slice(0, dot)}.${base.slice(dot)}`
          : `${base}+${w.rng.pick(['promo', 'deal', 'x', String(i)])}${i}`
    const domain = w.rng.chance(0.2) ? 'googlemail.com' : 'gmail.com'
    const row = {
      user_id: w.id('u'),
      email: `${local}@${domain}`,
      ip: w.rng.chance(0.3) ? w.mobileIp(c) : ip,
      device_id: device.fp,
      timezone: zone,
      event_country: c.code,
    }
    emit(w, 'promo_alias', actor, t, device, { event: 'signup', ...row })
    emit(w, 'promo_alias', actor, t + w.rng.between(3, 20) * MINUTE, device, { event: 'checkout', ...row })
    t += w.rng.between(20, 600) * MINUTE
  }
}

/** Credential stuffing from a few hosting servers against real and non-existent accounts. */
export function stuffingHosting(w: World): void {
  const actor = w.id('stuff')
  const ips = Array.from({ length: w.rng.between(2, 5) }, () => hostingIp(w))
  let t = campaignStart(w)
  const headless = w.rng.chance(0.3)
  for (let i = w.rng.between(30, 90); i > 0; i--) {
    t += w.rng.between(5, 90) * 1000
    const victim = w.rng.chance(0.4) ? w.rng.pick(registry) : null
    const email = victim?.email ?? fakeRealEmail(w, pickCountry(w.rng))
    emit(w, 'stuffing_hosting', actor, t, null, {
      event: 'login',
      user_id: victim?.id ?? w.id('u'),
      email,
      ip: w.rng.pick(ips),
      device_id: uniqueFp(w.rng),
      timezone: 'UTC',
      ...(headless ? { device: { is_headless: true } } : {}),
    })
  }
}

/** Logins through a residential proxy pool: a new home address in a new country per attempt. */
export function residentialProxyPool(w: World): void {
  const actor = w.id('rproxy')
  const zone = w.rng.pick(ATTACKER_ZONES)
  const tool = uniqueFp(w.rng)
  const sameTool = w.rng.chance(0.4)
  // Antidetect kits set the browser's time zone to the proxy's.
  const matchZone = w.rng.chance(0.6)
  let t = campaignStart(w)
  for (let i = w.rng.between(20, 60); i > 0; i--) {
    t += w.rng.between(30, 600) * 1000
    const c = pickCountry(w.rng)
    const victim = w.rng.chance(0.5) ? w.rng.pick(registry) : null
    const signup = victim === null && w.rng.chance(0.5)
    emit(w, 'residential_proxy', actor, t, null, {
      event: signup ? 'signup' : 'login',
      user_id: victim?.id ?? w.id('u'),
      email: victim?.email ?? fakeRealEmail(w, c),
      ip: residentialProxy(w, c),
      device_id: sameTool ? tool : uniqueFp(w.rng),
      timezone: matchZone ? w.rng.pick(c.zones) : zone,
      event_country: victim?.country.code ?? c.code,
    })
  }
}

/** Stuffing from one IPv6 /64, a new interface id per attempt. */
export function ipv6Rotation(w: World): void {
  const actor = w.id('v6')
  const c = pickCountry(w.rng)
  const head =
    w.nets.v6Prefix(w.rng, ACCESS[c.code]!.home, 'residential') ??
    w.nets.v6Prefix(w.rng, HOSTING_ASNS, 'hosting')
  if (head === null) return
  let t = campaignStart(w)
  const zone = w.rng.pick(ATTACKER_ZONES)
  for (let i = w.rng.between(25, 70); i > 0; i--) {
    t += w.rng.between(10, 120) * 1000
    const victim = w.rng.chance(0.5) ? w.rng.pick(registry) : null
    emit(w, 'ipv6_rotation', actor, t, null, {
      event: 'login',
      user_id: victim?.id ?? w.id('u'),
      email: victim?.email ?? fakeRealEmail(w, c),
      ip: v6InPrefix(head, randomIid(w.rng)),
      device_id: uniqueFp(w.rng),
      timezone: zone,
    })
  }
}

/** Phones or emulators, each creating accounts over days and replaying its device token. */
export function deviceFarm(w: World): void {
  const actor = w.id('dfarm')
  const c = pickCountry(w.rng)
  const emulator = w.rng.chance(0.5)
  const phones = Array.from(
    { length: w.rng.between(3, 6) },
    () => new Device(uniqueFp(w.rng), 1, emulator ? { is_emulator: true } : undefined),
  )
  let t = campaignStart(w)
  for (let i = w.rng.between(15, 40); i > 0; i--) {
    t += w.rng.between(2, 90) * MINUTE
    const phone = w.rng.pick(phones)
    const row = {
      user_id: w.id('u'),
      email: fakeRealEmail(w, c),
      ip: w.rng.chance(0.5) ? w.mobileIp(c) : residentialProxy(w, c),
      device_id: phone.fp,
      timezone: w.rng.pick(c.zones),
      event_country: c.code,
      ...(phone.flags ? { device: phone.flags } : {}),
    }
    emit(w, 'device_farm', actor, t, phone, { event: 'signup', ...row })
    emit(w, 'device_farm', actor, t + w.rng.between(1, 10) * MINUTE, phone, { event: 'checkout', ...row })
  }
}

/** Automated browsers: naive headless, or stealth kits that tamper, inject noise or spoof. */
export function headlessBrowsers(w: World): void {
  const actor = w.id('bot')
  const flags = w.rng.pick<Row>([
    { is_headless: true },
    { is_tampered: true },
    { antidetect_score: 70 + w.rng.int(25), antidetect_confidence: w.rng.pick(['medium', 'high']) },
    { is_noise_injected: true },
    { ua_consistent: false },
  ])
  const c = pickCountry(w.rng)
  const hosting = w.rng.chance(0.4)
  let t = campaignStart(w)
  for (let i = w.rng.between(10, 30); i > 0; i--) {
    t += w.rng.between(1, 30) * MINUTE
    emit(w, 'headless_stealth', actor, t, null, {
      event: w.rng.chance(0.6) ? 'signup' : 'login',
      user_id: w.id('u'),
      email: fakeRealEmail(w, c),
      ip: hosting ? hostingIp(w) : residentialProxy(w, c),
      device_id: uniqueFp(w.rng),
      timezone: w.rng.pick(c.zones),
      event_country: c.code,
      device: flags,
    })
  }
}

/** Signups with generated mailboxes at free providers, through residential proxies in the target country. */
export function machineMailboxes(w: World): void {
  const actor = w.id('gen')
  const c = pickCountry(w.rng)
  let t = campaignStart(w)
  for (let i = w.rng.between(10, 30); i > 0; i--) {
    t += w.rng.between(5, 120) * MINUTE
    emit(w, 'machine_mailbox', actor, t, null, {
      event: 'signup',
      user_id: w.id('u'),
      email: `${machineMailbox(w.rng)}@${w.rng.pick(FREE_MAIL)}`,
      ip: residentialProxy(w, c),
      device_id: uniqueFp(w.rng),
      timezone: w.rng.pick(c.zones),
      event_country: c.code,
    })
  }
}

/** An established account logged into from a foreign home address on a new device, then a checkout. */
export function accountTakeover(w: World): void {
  const established = registry.filter((p) => p.established)
  const victim = w.rng.pick(established.length ? established : registry)
  let from = pickCountry(w.rng)
  while (from.code === victim.country.code) from = pickCountry(w.rng)
  const t = campaignStart(w)
  const device = new Device(uniqueFp(w.rng), 1)
  const row = {
    user_id: victim.id,
    email: victim.email,
    ip: residentialProxy(w, from),
    device_id: device.fp,
    timezone: w.rng.pick(from.zones),
    event_country: victim.country.code,
  }
  emit(w, 'account_takeover', victim.id, t, device, { event: 'login', ...row })
  emit(w, 'account_takeover', victim.id, t + w.rng.between(2, 30) * MINUTE, device, {
    event: 'checkout',
    ...row,
  })
}

/** A patient fraudster: one device, an account every few hours, plausible names, local proxies. */
export function lowAndSlow(w: World): void {
  const actor = w.id('slow')
  const c = pickCountry(w.rng)
  const device = new Device(uniqueFp(w.rng), 0.5)
  const zone = w.rng.pick(c.zones)
  let t = START + WARMUP_DAYS * DAY + w.rng.next() * 3 * DAY
  for (let i = w.rng.between(6, 16); i > 0; i--) {
    t += w.rng.between(4, 14) * HOUR
    emit(w, 'low_and_slow', actor, t, device, {
      event: 'signup',
      user_id: w.id('u'),
      email: fakeRealEmail(w, c),
      ip: residentialProxy(w, c),
      device_id: device.fp,
      timezone: zone,
      event_country: c.code,
    })
  }
}

export const ATTACKS: ReadonlyArray<readonly [string, (w: World) => void, number]> = [
  ['hosting_signup_farm', hostingFarm, 12],
  ['promo_alias', promoAlias, 12],
  ['stuffing_hosting', stuffingHosting, 12],
  ['residential_proxy', residentialProxyPool, 12],
  ['ipv6_rotation', ipv6Rotation, 8],
  ['device_farm', deviceFarm, 12],
  ['headless_stealth', headlessBrowsers, 8],
  ['machine_mailbox', machineMailboxes, 8],
  ['account_takeover', accountTakeover, 8],
  ['low_and_slow', lowAndSlow, 8],
]

export { COUNTRIES }
