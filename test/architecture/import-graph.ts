import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/**
 * The import graph of a source tree, from a small parser over the text. It counts every `import`,
 * `import type`, `export … from`, side-effect import, and `import()`/`require()` with a literal
 * specifier: a type-only import couples two modules as much as a value import does.
 */

/** Path relative to the root (e.g. `scoring/types.ts`) -> relative imports resolved the same way, and bare specifiers. */
export type Graph = Map<string, { local: string[]; external: string[] }>

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name)
    if (e.isDirectory()) return tsFiles(p)
    return e.name.endsWith('.ts') ? [p] : []
  })
}

/** Comments out (a commented-out import does not count); strings stay, the specifiers live in them. */
const stripComments = (s: string) => s.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')

const SPECIFIER_PATTERNS = [
  // import x from '…', import type { … } from '…', export { … } from '…', export * from '…' (multi-line too)
  /^\s*(?:import|export)\b[^;'"`]*?\bfrom\s*['"]([^'"]+)['"]/gm,
  // import '…' (side effect only)
  /^\s*import\s*['"]([^'"]+)['"]/gm,
  // import('…') and require('…') with a literal specifier
  /\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
]

export function specifiers(source: string): string[] {
  const code = stripComments(source)
  return SPECIFIER_PATTERNS.flatMap((re) => [...code.matchAll(re)].map((m) => m[1]!))
}

const posix = (p: string) => p.split('\\').join('/')

/** Relative specifiers are resolved against the importing file, with the `.js` of NodeNext mapped to `.ts`. */
export function importGraph(root: string): Graph {
  const graph: Graph = new Map()
  for (const file of tsFiles(root)) {
    const local: string[] = []
    const external: string[] = []
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('.'))
        local.push(posix(relative(root, resolve(dirname(file), spec).replace(/\.js$/, '.ts'))))
      else external.push(spec)
    }
    graph.set(posix(relative(root, file)), { local, external })
  }
  return graph
}

/** One cycle per strongly connected component (Tarjan), each the shortest `a -> b -> … -> a` from its first file. */
export function cycles(edges: ReadonlyMap<string, readonly string[]>): string[] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  let next = 0
  const visit = (v: string) => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    onStack.add(v)
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const component: string[] = []
    let w: string
    do {
      w = stack.pop()!
      onStack.delete(w)
      component.push(w)
    } while (w !== v)
    if (component.length > 1 || (edges.get(v) ?? []).includes(v)) components.push(component)
  }
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v)
  return components.map((c) => shortestLoop(edges, new Set(c), [...c].sort()[0]!))
}

/** Breadth-first from `start` back to itself inside one component. */
function shortestLoop(
  edges: ReadonlyMap<string, readonly string[]>,
  members: Set<string>,
  start: string,
): string {
  const prev = new Map<string, string>()
  const queue = [start]
  while (queue.length) {
    const v = queue.shift()!
    for (const w of edges.get(v) ?? []) {
      if (!members.has(w)) continue
      if (w === start) {
        const path: string[] = []
        for (let u: string | undefined = v; u !== undefined && u !== start; u = prev.get(u)) path.unshift(u)
        return [start, ...path, start].join(' -> ')
      }
      if (!prev.has(w)) {
        prev.set(w, v)
        queue.push(w)
      }
    }
  }
  return [...members].join(' -> ')
}
