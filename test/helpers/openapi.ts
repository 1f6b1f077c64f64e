/**
 * The OpenAPI document with every local `$ref` replaced by what it names (components.schemas,
 * responses, headers), for tests that read schemas by walking them. A nullable use of a named schema
 * (`allOf: [$ref]` beside `nullable: true`) becomes that schema with `nullable: true`.
 */
type Json = { [key: string]: unknown }
const isJson = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

export function deref<T>(doc: T): T {
  const root = doc as Json
  const lookup = (pointer: string): unknown =>
    pointer
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>(
        (node, key) => (isJson(node) ? node[key.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined),
        root,
      )
  const walk = (node: unknown, depth: number): unknown => {
    if (depth > 64) throw new Error('deref: $ref cycle')
    if (Array.isArray(node)) return node.map((n) => walk(n, depth))
    if (!isJson(node)) return node
    if (typeof node['$ref'] === 'string') {
      const target = lookup(node['$ref'])
      if (target === undefined) throw new Error(`deref: ${node['$ref']} names nothing`)
      return walk(target, depth + 1)
    }
    const all = node['allOf']
    if (Array.isArray(all) && all.length === 1 && node['nullable'] === true)
      return { ...(walk(all[0], depth + 1) as Json), nullable: true }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === 'example' ? v : walk(v, depth)]))
  }
  return walk(root, 0) as T
}
