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
 * other part's writes, and no part reads them): the contract of a batch. Rows come back as JSON arrays
 * (numbers stay numbers; the parts on the hot path return counts, times, flags and hashes), a write run
 * with `run` as the number of rows it changed; a write read with `get`/`all` (`INSERT … RETURNING`)
 * goes in the WITH list too and returns its RETURNING rows.
 */
export interface ComposedBatch {
  sql: string
  params: Param[]
}

const texts = new Map<string, { sql: string; writes: boolean[] }>()
/**
 * A small number per part text: a batch's key is its parts' numbers, not their texts joined (a
 * scoring batch's texts run to over a kilobyte, copied and hashed again for every batch).
 */
const partIds = new Map<string, number>()
/** Distinct batch shapes are few (one per combination of an event's parts); the bound is a safeguard. */
const MAX_TEXTS = 2000

const WRITES = /^\s*(INSERT|UPDATE|DELETE)\b/i

function compose(ops: readonly Op[]): string {
  const ctes: string[] = []
  const cols: string[] = []
  ops.forEach((o, i) => {
    const writes = WRITES.test(o.sql)
    if (o.kind === 'run') {
      if (!writes) throw new Error('a batched run must be an INSERT, UPDATE or DELETE')
      // Its own RETURNING (if any) returns one row per changed row too.
      ctes.push(`w${i} AS (${o.sql}${/\bRETURNING\b/i.test(o.sql) ? '' : ' RETURNING 1'})`)
      cols.push(`(SELECT COUNT(*) FROM w${i}) AS r${i}`)
    } else if (writes) {
      // A write whose RETURNING rows are read (`INSERT … RETURNING`): a WITH part too.
      ctes.push(`w${i} AS (${o.sql})`)
      cols.push(`(SELECT COALESCE(json_agg(t), '[]') FROM w${i} AS t) AS r${i}`)
    } else {
      cols.push(`(SELECT COALESCE(json_agg(t), '[]') FROM (${o.sql}) AS t) AS r${i}`)
    }
  })
  const head = ctes.length ? `WITH ${ctes.join(', ')} ` : ''
  return `${head}SELECT ${cols.join(', ')}`
}

/** The statement text (cached per shape) and its parameters, in the order their `?` appear in it. */
export function composeBatch(ops: readonly Op[]): ComposedBatch {
  if (texts.size >= MAX_TEXTS || partIds.size >= MAX_TEXTS) {
    // Numbers are only reused once no key holds them.
    texts.clear()
    partIds.clear()
  }
  let key = ''
  for (const o of ops) {
    let id = partIds.get(o.sql)
    if (id === undefined) {
      id = partIds.size
      partIds.set(o.sql, id)
    }
    key += `${o.kind[0]}${id},`
  }
  let shape = texts.get(key)
  if (shape === undefined) {
    shape = { sql: compose(ops), writes: ops.map((o) => WRITES.test(o.sql)) }
    texts.set(key, shape)
  }
  // The write parts come first in the text (WITH), then the reads (the select list).
  const { writes } = shape
  const params: Param[] = []
  ops.forEach((o, i) => {
    if (writes[i]) params.push(...o.params)
  })
  ops.forEach((o, i) => {
    if (!writes[i]) params.push(...o.params)
  })
  return { sql: shape.sql, params }
}

/** Each part's result as the single statement would have given it, from the row's columns in order. */
export function decodeBatch(ops: readonly Op[], row: readonly unknown[]): unknown[] {
  return ops.map((o, i) => {
    const v = row[i]
    if (o.kind === 'run') return Number(v)
    const rows = v as Record<string, unknown>[]
    return o.kind === 'all' ? rows : rows[0]
  })
}
