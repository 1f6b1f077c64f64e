import type { Op, Param } from './db.js'

/**
 * One PostgreSQL statement for a batch of independent statements (db.ts BatchOp), so the batch costs one
 * round trip and one prepared statement instead of one of each per part:
 *
 *   WITH w0 AS (INSERT … RETURNING 1), w2 AS (UPDATE … RETURNING 1)
 *   SELECT (SELECT COUNT(*) FROM w0) AS r0,
 *          (SELECT COALESCE(json_agg(t), '[]') FROM (SELECT …) AS t) AS r1, …
 *
 * Every part runs against the snapshot the statement starts with (a data-modifying WITH part sees no
 * other part's writes, and no part reads them): the contract of a batch. Reads come back as JSON arrays
 * of their rows (numbers stay numbers; the read parts of the hot path return counts, times and hashes),
 * writes as the number of rows they changed, as `run` reports it.
 */
export interface ComposedBatch {
  sql: string
  params: Param[]
}

const texts = new Map<string, string>()
/** Distinct batch shapes are few (one per combination of an event's parts); the bound is a safeguard. */
const MAX_TEXTS = 2000

function compose(ops: readonly Op[]): string {
  const ctes: string[] = []
  const cols: string[] = []
  ops.forEach((o, i) => {
    if (o.kind === 'run') {
      if (/\bRETURNING\b/i.test(o.sql)) throw new Error('a batched write may not have its own RETURNING')
      ctes.push(`w${i} AS (${o.sql} RETURNING 1)`)
      cols.push(`(SELECT COUNT(*) FROM w${i}) AS r${i}`)
    } else {
      cols.push(`(SELECT COALESCE(json_agg(t), '[]') FROM (${o.sql}) AS t) AS r${i}`)
    }
  })
  const head = ctes.length ? `WITH ${ctes.join(', ')} ` : ''
  return `${head}SELECT ${cols.join(', ')}`
}

/** The statement text (cached per shape) and its parameters, in the order their `?` appear in it. */
export function composeBatch(ops: readonly Op[]): ComposedBatch {
  const key = ops.map((o) => `${o.kind}\u0001${o.sql}`).join('\u0002')
  let sql = texts.get(key)
  if (sql === undefined) {
    sql = compose(ops)
    if (texts.size >= MAX_TEXTS) texts.clear()
    texts.set(key, sql)
  }
  // The write parts come first in the text (WITH), then the reads (the select list).
  const params: Param[] = []
  for (const o of ops) if (o.kind === 'run') params.push(...o.params)
  for (const o of ops) if (o.kind !== 'run') params.push(...o.params)
  return { sql, params }
}

/** Each part's result as the single statement would have given it. */
export function decodeBatch(ops: readonly Op[], row: Record<string, unknown>): unknown[] {
  return ops.map((o, i) => {
    const v = row[`r${i}`]
    if (o.kind === 'run') return Number(v)
    const rows = v as Record<string, unknown>[]
    return o.kind === 'all' ? rows : rows[0]
  })
}
