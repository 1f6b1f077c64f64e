import { performance } from 'node:perf_hooks'
import { loadSettings } from '../src/config/settings.js'
import { loadIpIntel } from '../src/intel/ip/index.js'

export interface IpIntelBench {
  /** Time to load the ASN table, the geo databases and the stored feeds. */
  loadMs: number
  lookupsPerSec: number
  /** Resident memory of the process after loading and the run. */
  rssMb: number
}

/** Spread of addresses over the IPv4 space plus a few IPv6 and mapped ones (deterministic). */
function sample(count: number): string[] {
  const out: string[] = []
  let x = 0x9e3779b9
  for (let i = 0; i < count; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0
    if (i % 10 === 9) {
      out.push(
        `2a0${i % 4}:${(x & 0xffff).toString(16)}:${(x >>> 16).toString(16)}::${(i & 0xfff).toString(16)}`,
      )
    } else if (i % 50 === 7) out.push(`::ffff:${x >>> 24}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`)
    else out.push(`${x >>> 24}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`)
  }
  return out
}

/** Loads the IP intelligence once (feeds from `feedsDir`, default VERDICT_FEEDS_DIR) and times lookups. */
export async function benchIpIntel(lookups = 200_000, feedsDir?: string): Promise<IpIntelBench> {
  const loadStart = performance.now()
  const intel = await loadIpIntel({ feedsDir: feedsDir ?? loadSettings().feeds.dir })
  const loadMs = performance.now() - loadStart

  const ips = sample(10_000)
  // Warm the JIT so the rate reflects steady state.
  for (const ip of ips) intel.lookup(ip)

  let located = 0
  const start = performance.now()
  for (let i = 0; i < lookups; i++) if (intel.lookup(ips[i % ips.length]!)?.country) located++
  const elapsedMs = performance.now() - start
  // Using the result keeps the loop from being optimised away.
  if (located === 0) throw new Error('benchmark sample located no addresses')
  return {
    loadMs: Math.round(loadMs * 10) / 10,
    lookupsPerSec: Math.round(lookups / (elapsedMs / 1000)),
    rssMb: Math.round(process.memoryUsage().rss / 1048576),
  }
}
