/**
 * Latency under realistic arrivals rather than at saturation: requests one at a time, and an open-loop
 * Poisson process at a fixed rate (exponential gaps between scheduled send times; a request is sent on
 * schedule whether or not earlier ones have been answered, and its latency runs from its scheduled time,
 * so a server that falls behind is charged for the queue it builds).
 */
import http from 'node:http'

export interface Latencies {
  /** Requests answered 2xx. */
  ok: number
  failed: number
  p50: number
  p99: number
  max: number
  seconds: number
}

export interface Target {
  port: number
  path: string
  headers: Record<string, string>
  bodies: Record<string, unknown>[]
}

function send(agent: http.Agent, t: Target, body: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        agent,
        host: '127.0.0.1',
        port: t.port,
        path: t.path,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...t.headers,
        },
      },
      (res) => {
        res.resume()
        res.on('end', () => resolve((res.statusCode ?? 0) < 300))
      },
    )
    req.on('error', () => resolve(false))
    req.end(body)
  })
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}

function summarise(times: number[], ok: number, failed: number, seconds: number): Latencies {
  times.sort((a, b) => a - b)
  const r = (x: number) => Math.round(x * 100) / 100
  return {
    ok,
    failed,
    p50: r(quantile(times, 0.5)),
    p99: r(quantile(times, 0.99)),
    max: r(times.at(-1) ?? 0),
    seconds,
  }
}

/** One request at a time on one keep-alive connection, for `seconds`. */
export async function oneAtATime(t: Target, seconds: number): Promise<Latencies> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const times: number[] = []
  let ok = 0
  let failed = 0
  const t0 = performance.now()
  const end = t0 + seconds * 1000
  for (let i = 0; performance.now() < end; i++) {
    const body = JSON.stringify(t.bodies[i % t.bodies.length])
    const s = performance.now()
    if (await send(agent, t, body)) ok++
    else failed++
    times.push(performance.now() - s)
  }
  agent.destroy()
  return summarise(times, ok, failed, (performance.now() - t0) / 1000)
}

/** A seeded generator, so every run sends the same schedule. */
function uniform(seed: number): () => number {
  let x = seed >>> 0
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0
    return (x + 0.5) / 4294967296
  }
}

/** Open-loop Poisson arrivals at `rate` per second for `seconds`. */
export async function poisson(t: Target, rate: number, seconds: number): Promise<Latencies> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 })
  const rnd = uniform(29)
  const times: number[] = []
  let ok = 0
  let failed = 0
  const inFlight: Promise<void>[] = []
  const t0 = performance.now()
  let at = t0
  const end = t0 + seconds * 1000
  for (let i = 0; ; i++) {
    at += (-Math.log(rnd()) / rate) * 1000
    if (at >= end) break
    const wait = at - performance.now()
    if (wait > 1) await new Promise((r) => setTimeout(r, wait))
    const scheduled = at
    const body = JSON.stringify(t.bodies[i % t.bodies.length])
    inFlight.push(
      send(agent, t, body).then((good) => {
        times.push(performance.now() - scheduled)
        if (good) ok++
        else failed++
      }),
    )
  }
  await Promise.all(inFlight)
  agent.destroy()
  return summarise(times, ok, failed, (performance.now() - t0) / 1000)
}

export function latencyRow(label: string, l: Latencies): string {
  const f = (x: number) => x.toFixed(1).padStart(6)
  return `${label.padEnd(34)} p50 ${f(l.p50)} ms   p99 ${f(l.p99)} ms   max ${f(l.max)} ms   (${l.ok} requests${l.failed ? `, ${l.failed} failed` : ''})`
}
