import { REASON } from '../reasons.js'
import type { Check, ListMatch } from '../types.js'
import { fire } from './fire.js'

const ORDER = ['user', 'email', 'phone', 'device', 'ip'] as const

const NAME = { user: 'user', email: 'email', phone: 'phone number', device: 'device', ip: 'IP address' }

/** One check per matched entity type of a list, in a stable order. */
export function listChecks(matches: ListMatch[], list: 'allow' | 'block'): Check[] {
  const types = new Set(matches.filter((m) => m.list === list).map((m) => m.type))
  return ORDER.filter((t) => types.has(t)).map((type) => {
    const code = `${list}listed_${type}` as const
    return fire(code, {
      key: `${list}list_${type}`,
      weight: REASON[code].fixedWeight,
      message:
        list === 'block'
          ? `The ${NAME[type]} is on this account's blocklist.`
          : `The ${NAME[type]} is on this account's allowlist.`,
      evidence: { list, type },
    })
  })
}
