import type { Check, ListMatch } from '../types.js'

const ORDER = ['user', 'email', 'device', 'ip'] as const

/** One check per matched entity type of a list, in a stable order. */
export function listChecks(matches: ListMatch[], list: 'allow' | 'block'): Check[] {
  const types = new Set(matches.filter((m) => m.list === list).map((m) => m.type))
  return ORDER.filter((t) => types.has(t)).map((type) => ({
    check: 'lists',
    key: `${list}list_${type}`,
    weight: list === 'block' ? 100 : 0,
    reason: `${list}listed_${type}`,
    message:
      list === 'block'
        ? `The ${type === 'ip' ? 'IP address' : type} is on this account's blocklist.`
        : `The ${type === 'ip' ? 'IP address' : type} is on this account's allowlist.`,
    evidence: { list, type },
  }))
}
