import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import type { Engine, Harness } from './build.js'
import { PG_URL } from './pg.js'

/**
 * The bytes of every file that holds the store: SQLite's files, or each relation's file (tables,
 * indexes, TOAST) of the test's PostgreSQL schema, read through the server after a CHECKPOINT has
 * written the buffers out (the local test server runs us as a superuser). `exceptTables` leaves out
 * those tables and their indexes (PostgreSQL only).
 */
export async function storeBytes(
  h: Harness,
  engine: Engine,
  options: { exceptTables?: readonly string[] } = {},
): Promise<Buffer> {
  if (engine === 'sqlite') {
    return Buffer.concat(
      readdirSync(h.dir)
        .filter((f) => f.startsWith('verdict.db'))
        .map((f) => readFileSync(join(h.dir, f))),
    )
  }
  // On a connection of its own without the store's statement timeout: a checkpoint of a server that other
  // tests keep busy (they create databases, each of which checkpoints) can take longer than a statement may.
  const admin = new pg.Client({ connectionString: PG_URL })
  await admin.connect()
  try {
    await admin.query('CHECKPOINT')
  } finally {
    await admin.end()
  }
  const except = options.exceptTables ?? []
  const rels = await h.store.db.all<{ path: string; owner: string }>(
    `SELECT pg_relation_filepath(c.oid) AS path,
            COALESCE((SELECT t.relname FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
                       WHERE i.indexrelid = c.oid), c.relname) AS owner
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE (n.nspname = current_schema() OR c.oid IN (
              SELECT reltoastrelid FROM pg_class t JOIN pg_namespace tn ON tn.oid = t.relnamespace
               WHERE tn.nspname = current_schema()))
        AND c.relkind IN ('r', 'i', 't') AND pg_relation_filepath(c.oid) IS NOT NULL`,
  )
  if (rels.length < 10) throw new Error(`only ${rels.length} relations found in the schema`)
  const out: Buffer[] = []
  for (const r of rels) {
    if (except.includes(r.owner)) continue
    const row = await h.store.db.get<{ bytes: Buffer }>('SELECT pg_read_binary_file(?) AS bytes', [r.path])
    if (row) out.push(Buffer.from(row.bytes))
  }
  return Buffer.concat(out)
}

/** Which of `needles` occur in `bytes`, sorted. */
export function needlesIn(bytes: Buffer, needles: readonly string[]): string[] {
  return needles.filter((n) => bytes.includes(Buffer.from(n))).sort()
}
