import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { cycles, importGraph, specifiers } from './import-graph.js'

/**
 * The layering rules of docs/architecture.md over the real import graph of src/ (type imports count):
 * - scoring/ is the pure engine: it imports scoring/ and util/ only, and no package or Node builtin
 *   (it uses none today; anything with I/O, randomness or a clock belongs to the services that feed it);
 * - store/ is the bottom layer: it never imports the layers that use it (services, routes, plugins, cli,
 *   jobs, ai, intel, the app); it may import util/ and scoring/ (whose types and pure helpers it stores);
 * - intel/ is reference data: it knows nothing of routes, services, storage, plugins, cli, jobs or the app;
 * - services/ never imports routes/ or plugins/ (HTTP knows the services, never the other way round);
 * - the machinery knows no domain: services/runtime/ imports no other folder of services/, and
 *   store/engine/ no other folder of store/;
 * - no import cycle anywhere.
 */

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src')
const graph = importGraph(SRC)

/** `dir/` or a file at the top of src/ (`app.ts`). */
const within = (prefix: string, path: string) =>
  prefix.endsWith('.ts') ? path === prefix : path.startsWith(`${prefix}/`)

/** Every `file -> import` edge from a file under `from` to a file under one of `banned`. */
function crossings(from: string, banned: string[]): string[] {
  const out: string[] = []
  for (const [file, { local }] of graph) {
    if (!within(from, file)) continue
    for (const target of local) if (banned.some((b) => within(b, target))) out.push(`${file} -> ${target}`)
  }
  return out
}

describe('import graph of src/', () => {
  it('is parsed: multi-line, type-only and re-export imports count, commented ones do not', () => {
    expect(graph.size).toBeGreaterThan(100)
    expect(graph.get('scoring/engine.ts')?.local).toContain('scoring/types.ts')
    expect(graph.get('fastify-augment.d.ts')?.local).toContain('routes/types.ts')
    const source =
      "import type {\n  A,\n  B,\n} from './a.js'\nexport * from \"./b.js\"\n// import './c.js'\n"
    expect(specifiers(source)).toEqual(['./a.js', './b.js'])
  })

  it('resolves every relative import to a file of src/', () => {
    const missing = [...graph].flatMap(([f, { local }]) =>
      local.filter((t) => !graph.has(t)).map((t) => `${f} -> ${t}`),
    )
    expect(missing).toEqual([])
  })

  it('keeps the engine pure: scoring/ imports only scoring/ and util/, and no package or builtin', () => {
    const outside = [...graph].flatMap(([file, { local }]) =>
      within('scoring', file)
        ? local.filter((t) => !within('scoring', t) && !within('util', t)).map((t) => `${file} -> ${t}`)
        : [],
    )
    expect(outside).toEqual([])
    const packages = [...graph].flatMap(([file, { external }]) =>
      within('scoring', file) ? external.map((s) => `${file} -> ${s}`) : [],
    )
    expect(packages).toEqual([])
  })

  it('keeps storage at the bottom: store/ never imports the layers above it', () => {
    const above = ['services', 'routes', 'plugins', 'cli', 'jobs', 'ai', 'intel', 'app.ts', 'server.ts']
    expect(crossings('store', above)).toEqual([])
  })

  it('keeps reference data apart: intel/ never imports routes, services, store, plugins, cli or jobs', () => {
    const above = ['routes', 'services', 'store', 'plugins', 'cli', 'jobs', 'ai', 'app.ts', 'server.ts']
    expect(crossings('intel', above)).toEqual([])
  })

  it('keeps HTTP above the use cases: services/ never imports routes/ or plugins/', () => {
    expect(crossings('services', ['routes', 'plugins'])).toEqual([])
  })

  it('keeps the machinery domain-free: services/runtime/ and store/engine/ import no domain folder', () => {
    const domains = (layer: string, own: string) =>
      [...new Set([...graph.keys()].filter((f) => f.startsWith(`${layer}/`)).map((f) => f.split('/')[1]))]
        .filter((d) => d !== own && !d?.endsWith('.ts'))
        .map((d) => `${layer}/${d}`)
    const serviceDomains = domains('services', 'runtime')
    const storeDomains = domains('store', 'engine')
    expect(serviceDomains).toContain('services/decisions')
    expect(storeDomains).toContain('store/events')
    expect(crossings('services/runtime', serviceDomains)).toEqual([])
    expect(crossings('store/engine', [...storeDomains, 'store/index.ts'])).toEqual([])
  })

  it('has no import cycle', () => {
    const edges = new Map([...graph].map(([f, { local }]) => [f, local]))
    expect(cycles(edges)).toEqual([])
  })

  it('finds cycles and names their path (self-check of the checker)', () => {
    const edges = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts', 'd.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ])
    expect(cycles(edges)).toEqual(['a.ts -> b.ts -> c.ts -> a.ts', 'e.ts -> e.ts'])
  })
})
