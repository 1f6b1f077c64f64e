/**
 * `node dist/bench/cpuprofile-summary.js FILE.cpuprofile [--events N] [--top N]`: a V8 CPU profile's
 * self time by area (node-postgres, Node's net and streams, the store's engine, Fastify, …) and by
 * function, in µs per event when `--events` is given (else ms). A native frame (`writev`, better-sqlite3's
 * `run`, `JSON.parse`) counts in its caller's area with `(native)` added, so a syscall or a parse shows
 * where it is made. "On stack" is the time any frame of the area was on the stack (inclusive).
 */
import { readFileSync } from 'node:fs'

interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  hitCount: number
  children?: number[]
}
interface Profile {
  nodes: Node[]
  samples: number[]
  timeDeltas: number[]
  startTime: number
  endTime: number
}

const SPECIAL = new Set(['(idle)', '(garbage collector)', '(program)', '(root)'])

/** The area a script belongs to, from its URL. */
export function area(url: string): string {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (m) {
    const mod = m[1]!
    if (/^(pg|pg-protocol|pg-pool|pg-types|pgpass|pg-connection-string|postgres-[a-z]+)$/.test(mod))
      return 'node-postgres'
    if (
      /^(fastify|@fastify\/.*|light-my-request|find-my-way|avvio|fast-json-stringify|fast-querystring)$/.test(
        mod,
      )
    )
      return 'fastify'
    return mod
  }
  if (/^node:(net|stream|internal\/(stream|net|streams)|internal\/stream_base_commons)/.test(url))
    return 'node net/streams'
  if (url.startsWith('node:')) return 'node other'
  const d = /dist\/(src|bench)\/(?:([^/]+)\/)?(?:([^/]+)\/)?/.exec(url)
  if (d) {
    if (d[1] === 'bench') return 'bench'
    if (d[2] === 'store' && d[3] === 'engine') return 'store engine'
    if (d[2] === 'store' || d[2] === 'services') return `${d[2]}/${d[3] ?? ''}`
    return d[2] ?? 'src'
  }
  return url ? 'other' : 'native'
}

export function summarise(p: Profile) {
  const byId = new Map<number, Node>()
  const parent = new Map<number, number>()
  for (const n of p.nodes) {
    byId.set(n.id, n)
    for (const c of n.children ?? []) parent.set(c, n.id)
  }
  const nodeArea = new Map<number, string>()
  const areaOf = (id: number): string => {
    let a = nodeArea.get(id)
    if (a !== undefined) return a
    const n = byId.get(id)!
    const f = n.callFrame
    if (SPECIAL.has(f.functionName)) a = f.functionName
    else if (f.url) a = area(f.url)
    else {
      const up = parent.get(id)
      const pa = up === undefined ? 'native' : areaOf(up).replace(/ \(native\)$/, '')
      a = SPECIAL.has(pa) ? 'native' : `${pa} (native)`
    }
    nodeArea.set(id, a)
    return a
  }
  const self = new Map<string, number>()
  const fn = new Map<string, number>()
  const onStack = new Map<string, number>()
  // Sample i lasts until the next one (the last one: the mean interval).
  const mean = (p.endTime - p.startTime) / Math.max(1, p.samples.length)
  for (let i = 0; i < p.samples.length; i++) {
    const id = p.samples[i]!
    const dt = i + 1 < p.timeDeltas.length ? p.timeDeltas[i + 1]! : mean
    const a = areaOf(id)
    self.set(a, (self.get(a) ?? 0) + dt)
    const f = byId.get(id)!.callFrame
    const file = f.url.replace(/^.*\/(node_modules\/|dist\/)/, '$1')
    const key = `${f.functionName || '(anon)'} ${file ? `${file}:${f.lineNumber + 1}` : `[${a}]`}`
    fn.set(key, (fn.get(key) ?? 0) + dt)
    const seen = new Set<string>()
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const b = areaOf(n).replace(/ \(native\)$/, '')
      if (!seen.has(b)) {
        seen.add(b)
        onStack.set(b, (onStack.get(b) ?? 0) + dt)
      }
    }
  }
  return { self, fn, onStack, total: p.endTime - p.startTime }
}

const isMain = process.argv[1]?.endsWith('cpuprofile-summary.js')
if (isMain) {
  const args = process.argv.slice(2)
  const opt = (name: string) => {
    const i = args.indexOf(name)
    return i >= 0 ? Number(args[i + 1]) : undefined
  }
  const events = opt('--events')
  const topN = opt('--top') ?? 40
  const p = JSON.parse(readFileSync(args[0]!, 'utf8')) as Profile
  const s = summarise(p)
  const unit = events ? 'µs/event' : 'ms'
  const fmt = (us: number) => (events ? us / events : us / 1000).toFixed(1).padStart(9)
  const busy = s.total - (s.self.get('(idle)') ?? 0)
  console.log(`profile ${fmt(s.total)} ${unit} wall, ${fmt(busy)} ${unit} not idle`)
  console.log(`\nself time by area (${unit}, share of not idle):`)
  for (const [k, v] of [...s.self].sort((a, b) => b[1] - a[1]))
    console.log(`${fmt(v)}  ${((100 * v) / busy).toFixed(1).padStart(5)} %  ${k}`)
  console.log(`\non stack by area (${unit}):`)
  for (const [k, v] of [...s.onStack].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`${fmt(v)}  ${k}`)
  console.log(`\nself time by function (${unit}):`)
  for (const [k, v] of [...s.fn].sort((a, b) => b[1] - a[1]).slice(0, topN)) console.log(`${fmt(v)}  ${k}`)
}
