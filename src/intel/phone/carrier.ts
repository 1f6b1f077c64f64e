import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { readBsonStrings } from './bson-strings.js'

/**
 * Google libphonenumber's carrier prefix tables, one per country calling code, keyed by the leading digits
 * of the national number. They name the operator a range was first allocated to; a number ported to
 * another operator keeps its old name here.
 */
export interface CarrierTable {
  lookup(callingCode: string, nationalNumber: string): string | null
  readonly entries: number
  readonly loaded: boolean
}

interface PrefixMap {
  longest: number
  names: Map<string, string>
}

/** Reads every `<calling code>.bson` in `dir` into memory. A missing or unreadable directory gives an empty table. */
export function loadCarrierTable(dir: string): CarrierTable {
  const byCode = new Map<string, PrefixMap>()
  const interned = new Map<string, string>()
  let entries = 0
  let loaded = true
  try {
    for (const file of readdirSync(dir)) {
      const code = /^(\d{1,3})\.bson$/.exec(file)?.[1]
      if (!code) continue
      const map: PrefixMap = { longest: 0, names: new Map() }
      for (const [prefix, name] of readBsonStrings(readFileSync(join(dir, file)))) {
        if (!/^\d+$/.test(prefix) || !name) continue
        // Tables repeat a few hundred operator names tens of thousands of times; keep one copy of each.
        let shared = interned.get(name)
        if (shared === undefined) {
          shared = name
          interned.set(name, name)
        }
        map.names.set(prefix, shared)
        if (prefix.length > map.longest) map.longest = prefix.length
        entries++
      }
      byCode.set(code, map)
    }
  } catch {
    byCode.clear()
    entries = 0
    loaded = false
  }
  return {
    entries,
    loaded,
    lookup(callingCode, nationalNumber) {
      const map = byCode.get(callingCode)
      if (!map) return null
      for (let len = Math.min(map.longest, nationalNumber.length); len > 0; len--) {
        const name = map.names.get(nationalNumber.slice(0, len))
        if (name !== undefined) return name
      }
      return null
    },
  }
}
