import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { safeReasonCode } from '../../src/ai/reasons.js'
import { INTERFACE_CODES } from '../../src/scoring/interface-codes.js'
import { REASONS, type ReasonSpec } from '../../src/scoring/reasons.js'
import { DEFAULT_WEIGHTS, type WeightKey } from '../../src/scoring/tenant-config.js'

const specs: readonly ReasonSpec[] = REASONS
const list = <T>(v: T | readonly T[]): T[] => (Array.isArray(v) ? [...v] : [v as T])

describe('reason registry', () => {
  it('holds each code once, in our shape, with a description', () => {
    const codes = specs.map((r) => r.code)
    expect(new Set(codes).size).toBe(codes.length)
    for (const r of specs) {
      expect(safeReasonCode(r.code)).toBe(r.code)
      expect(r.description.length).toBeGreaterThan(10)
    }
  })

  it('uses every configurable weight of scoring/tenant-config.ts', () => {
    const used = new Set(specs.flatMap((r) => ('weightKey' in r ? list<WeightKey>(r.weightKey) : [])))
    expect(Object.keys(DEFAULT_WEIGHTS).filter((k) => !used.has(k as WeightKey))).toEqual([])
  })

  it('holds every code of the interface', () => {
    const codes = new Set(specs.map((r) => r.code))
    expect(INTERFACE_CODES.filter((c) => !codes.has(c))).toEqual([])
  })
})

/** One table row of docs/scoring.md: the codes of its first cell, its family and its weight cell. */
interface DocRow {
  codes: string[]
  family: string
  weight: string
}

/** The rows of every `| code | family | weight | when |` table of the document. */
function docRows(markdown: string): DocRow[] {
  const rows: DocRow[] = []
  let inTable = false
  for (const line of markdown.split('\n')) {
    const cells = line.startsWith('|')
      ? line
          .split('|')
          .slice(1, -1)
          .map((c) => c.trim())
      : null
    if (!cells) inTable = false
    else if (cells.join('|') === 'code|family|weight|when') inTable = true
    else if (inTable && !cells[0]!.startsWith('---')) {
      const codes = [...cells[0]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)
      rows.push({ codes, family: cells[1]!, weight: cells[2]! })
    }
  }
  return rows
}

/** The weight cell the docs must show for a code, reduced to what is checked: keys, numbers, bonus. */
function expectedWeight(
  r: ReasonSpec,
): { keys: string[]; numbers: number[]; bonus: number | null } | 'reserved' {
  if ('reserved' in r) return 'reserved'
  if ('weightKey' in r) {
    const keys = list<WeightKey>(r.weightKey)
    return { keys, numbers: keys.map((k) => DEFAULT_WEIGHTS[k]), bonus: r.bonus ?? null }
  }
  return { keys: [], numbers: list(r.fixedWeight), bonus: null }
}

/** `**a** 25 / **b** 40, +10 corroborated` -> keys [a, b], numbers [25, 40], bonus 10 (other words are ignored). */
function parseWeight(cell: string): ReturnType<typeof expectedWeight> {
  if (cell === 'reserved') return 'reserved'
  const bonus = /\+(\d+) corroborated/.exec(cell)
  const rest = cell.replace(/\+\d+ corroborated/, '')
  return {
    keys: [...rest.matchAll(/\*\*(\w+)\*\*/g)].map((m) => m[1]!),
    numbers: [...rest.replace(/\*\*\w+\*\*/g, '').matchAll(/\d+/g)].map((m) => Number(m[0])),
    bonus: bonus ? Number(bonus[1]) : null,
  }
}

describe('docs/scoring.md', () => {
  const rows = docRows(readFileSync(new URL('../../docs/scoring.md', import.meta.url), 'utf8'))

  it('lists every code of the registry once, and no other', () => {
    const documented = rows.flatMap((r) => r.codes)
    const registered = specs.map((r) => r.code)
    expect({
      missing: registered.filter((c) => !documented.includes(c)),
      extra: documented.filter((c) => !registered.includes(c)),
      twice: documented.filter((c, i) => documented.indexOf(c) !== i),
    }).toEqual({ missing: [], extra: [], twice: [] })
  })

  it("gives each code the registry's family and weight (defaults from scoring/tenant-config.ts)", () => {
    const differ: string[] = []
    for (const row of rows) {
      for (const code of row.codes) {
        const spec = specs.find((r) => r.code === code)
        if (!spec) continue
        if (row.family !== spec.family) differ.push(`${code}: family ${row.family}, registry ${spec.family}`)
        const want = expectedWeight(spec)
        const got = parseWeight(row.weight)
        if (JSON.stringify(got) !== JSON.stringify(want)) {
          differ.push(
            `${code}: weight "${row.weight}" reads ${JSON.stringify(got)}, registry ${JSON.stringify(want)}`,
          )
        }
      }
    }
    expect(differ).toEqual([])
  })

  it('parses weight cells as the tables write them', () => {
    expect(parseWeight('**deviceReuseLow** 15 / **deviceReuseMed** 30, +10 corroborated')).toEqual({
      keys: ['deviceReuseLow', 'deviceReuseMed'],
      numbers: [15, 30],
      bonus: 10,
    })
    expect(parseWeight('40 (high confidence) / 25 (medium)')).toEqual({
      keys: [],
      numbers: [40, 25],
      bonus: null,
    })
    expect(rows.length).toBeGreaterThan(30)
  })
})
