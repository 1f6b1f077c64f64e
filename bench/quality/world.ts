/** What the populations and attacks share: planned events, devices, time and network helpers. */
import { ACCESS, type Networks, randomIid, v6InPrefix } from './networks.js'
import { type Country, countryByCode } from './people.js'
import type { Rng } from './rng.js'

export const DAY = 86_400_000
export const HOUR = 3_600_000
export const MINUTE = 60_000
export const DAYS = 14
/** The first days fill history (existing customers' earlier visits); they are not measured. */
export const WARMUP_DAYS = 2
export const START = Date.UTC(2026, 2, 2, 0, 0, 0)

export type Row = Record<string, unknown>

/** A browser or app install: its fingerprint, its cookie (the device token) and how it keeps it. */
export class Device {
  token: string | undefined
  constructor(
    /** Raw fingerprint; undefined when the integration sends none. */
    public fp: string | undefined,
    /** Probability that the token survives to the next visit (cookie loss, ITP, private windows). */
    public keep: number,
    public flags?: Row,
  ) {}
}

export interface Planned {
  t: number
  /** 0 legitimate, 1 attack. */
  label: 0 | 1
  pop: string
  /** The customer (legitimate) or the campaign (attack) the event belongs to. */
  actor: string
  device: Device | null
  row: Row
}

export class World {
  readonly events: Planned[] = []
  private seq = 0
  constructor(
    readonly rng: Rng,
    readonly nets: Networks,
  ) {}

  emit(e: Omit<Planned, 't'> & { t: number }): void {
    if (e.t < START || e.t >= START + DAYS * DAY) return
    this.events.push(e)
  }

  id(prefix: string): string {
    this.seq++
    return `${prefix}_${this.rng.chars('abcdefghijklmnopqrstuvwxyz0123456789', 10)}${this.seq.toString(36)}`
  }

  homeIp(c: Country): string {
    return this.nets.v4Addr(this.rng, ACCESS[c.code]!.home, 'residential', c.code)
  }

  /** A mobile carrier's CGNAT gateway: carriers share few addresses among many subscribers. */
  mobileIp(c: Country): string {
    const pool = this.cgnat.get(c.code) ?? []
    if (pool.length < 12) {
      const ip = this.nets.v4Addr(this.rng, ACCESS[c.code]!.mobile, 'residential', c.code)
      pool.push(ip)
      this.cgnat.set(c.code, pool)
      return ip
    }
    return this.rng.pick(pool)
  }
  private readonly cgnat = new Map<string, string[]>()

  /** A home IPv6 /64 (privacy extensions rotate the interface id); falls back to IPv4. */
  homeV6(c: Country): { next: () => string } {
    const head = this.nets.v6Prefix(this.rng, ACCESS[c.code]!.home, 'residential', c.code)
    if (head === null) {
      const ip = this.homeIp(c)
      return { next: () => ip }
    }
    return { next: () => v6InPrefix(head, randomIid(this.rng)) }
  }

  /** A time on `day` between local hours `lo` and `hi` in `zone`. */
  at(day: number, zone: string, lo = 7, hi = 23): number {
    const hour = lo + this.rng.next() * (hi - lo)
    return START + day * DAY + (hour - offsetHours(zone)) * HOUR
  }

  /** `n` distinct-ish days of activity, sorted, the first on or after `from`. */
  days(n: number, from = 0): number[] {
    const out: number[] = []
    for (let i = 0; i < n; i++) out.push(from + this.rng.int(DAYS - from))
    return out.sort((a, b) => a - b)
  }

  country(code: string): Country {
    return countryByCode(code)
  }
}

const offsets = new Map<string, number>()
/** UTC offset of `zone` in hours at the start of the simulation. */
export function offsetHours(zone: string): number {
  let o = offsets.get(zone)
  if (o === undefined) {
    const d = new Date(START)
    const local = new Date(d.toLocaleString('en-US', { timeZone: zone }))
    const utc = new Date(d.toLocaleString('en-US', { timeZone: 'UTC' }))
    o = Math.round((local.getTime() - utc.getTime()) / HOUR)
    offsets.set(zone, o)
  }
  return o
}

/**
 * Identical devices: the same phone model on the same OS version, or Macs of one generation, give one
 * fingerprint. A share of Apple users carry one of a few very common values.
 */
const IPHONE_MODELS = ['15', '15pro', '14', '13', '16', '16pro']
const MAC_MODELS = ['m1air', 'm2air', 'm3pro']
/** The fingerprint reads the time zone and language, so identical models collide within a zone. */
export function commonIphone(rng: Rng, zone: string): string {
  return `iphone-${rng.pick(IPHONE_MODELS)}-${zone}`
}
export function commonMac(rng: Rng, zone: string): string {
  return `macsafari-${rng.pick(MAC_MODELS)}-${zone}`
}
/** Firefox resistFingerprinting / Tor Browser: every user reports the same values. */
export const RFP_FP = `ffrfp-${'0'.repeat(26)}`

export function uniqueFp(rng: Rng): string {
  return rng.hex(32)
}
