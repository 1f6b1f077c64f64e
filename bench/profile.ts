/**
 * `--profile`, inside the server process: a V8 CPU profile (through the inspector, so only the measured
 * window is in it, not start-up) and a per-statement timing table. Statement time is wall time around
 * the call: on SQLite that is CPU on the event loop (better-sqlite3 is synchronous), on PostgreSQL it
 * includes the round trip and the backend's work.
 */
import { Session } from 'node:inspector/promises'
import type { BatchOp, Db, Op } from '../src/store/engine/db.js'
import { Session as PgSession } from '../src/store/engine/pg-session.js'

export interface StatementRow {
  sql: string
  calls: number
  totalMs: number
}

export interface ProfileResult {
  /** The profile as JSON (.cpuprofile, opens in Chrome DevTools or speedscope). */
  profile: string
  statements: StatementRow[]
  transactions: number
}

const labels = new Map<string, string>()
/** Statement texts are constants: each is shortened once (a regex per call would show in the profile). */
export function label(sql: string): string {
  let l = labels.get(sql)
  if (l === undefined) {
    l = sql.replace(/\s+/g, ' ').trim().slice(0, 90)
    labels.set(sql, l)
  }
  return l
}

const batchLabels = new Map<string, string>()
/** A batch (one round trip on PostgreSQL) is named by the tables its parts read or write. */
export function sqlOf(op: Op | BatchOp): string {
  if (op.kind !== 'batch') return op.sql
  const key = op.ops.map((o) => o.sql).join('\u0002')
  let l = batchLabels.get(key)
  if (l === undefined) {
    const table = (sql: string) => /\b(?:FROM|INTO|UPDATE)\s+([a-z_]+)/i.exec(sql)?.[1] ?? '?'
    l = `batch: ${op.ops.map((o) => `${o.kind === 'run' ? 'w' : 'r'} ${table(o.sql)}`).join(', ')}`
    batchLabels.set(key, l)
  }
  return l
}

/** Statements sent in one message (PostgreSQL's BEGIN and a transaction's first statements): one row. */
export function pipelineLabel(ops: readonly (Op | BatchOp)[]): string {
  return ops.map((o) => label(sqlOf(o)).slice(0, 40)).join(' + ')
}

/**
 * Calls `add` with the label and wall time of every statement `db` runs from now on, and of every message
 * of several statements PostgreSQL sends (BEGIN with a transaction's first read, held writes with the
 * next read or COMMIT, a batch on a connection): one call per round trip there. Returns the engine's
 * insides for further wrapping. The engines keep these private; the bench reaches in rather than give
 * production code a hook.
 */
export function watchStatements(db: Db, add: (label: string, ms: number) => void) {
  const inner = db as unknown as {
    execOp: (...args: unknown[]) => unknown
    execPipeline?: (client: unknown, ops: readonly (Op | BatchOp)[]) => Promise<unknown[]>
  }
  const pipeline = inner.execPipeline?.bind(db)
  const exec = inner.execOp.bind(db)
  inner.execOp = (...args: unknown[]) => {
    const op = (args.length === 2 ? args[1] : args[0]) as Op | BatchOp
    // A batch on a PostgreSQL connection goes out through execPipeline, which counts it.
    if (pipeline && op.kind === 'batch' && !(args[0] instanceof PgSession)) return exec(...args)
    const sql = sqlOf(op)
    const t0 = performance.now()
    const out = exec(...args)
    if (out instanceof Promise) return out.finally(() => add(sql, performance.now() - t0))
    add(sql, performance.now() - t0)
    return out
  }
  if (pipeline) {
    inner.execPipeline = (client, ops) => {
      const t0 = performance.now()
      return pipeline(client, ops).finally(() => add(pipelineLabel(ops), performance.now() - t0))
    }
  }
  return inner
}

/** Times every statement, COMMIT and transaction of `db` from now on; `take` returns and resets. */
function timeStatements(db: Db): { take: () => { rows: StatementRow[]; transactions: number } } {
  const rows = new Map<string, StatementRow>()
  let transactions = 0
  const add = (sql: string, ms: number) => {
    const key = label(sql)
    let r = rows.get(key)
    if (!r) {
      r = { sql: key, calls: 0, totalMs: 0 }
      rows.set(key, r)
    }
    r.calls++
    r.totalMs += ms
  }
  const inner = watchStatements(db, add) as unknown as { commit?: { run: () => unknown }; tx: Db['tx'] }
  if (inner.commit) {
    const commit = inner.commit
    const run = commit.run.bind(commit)
    inner.commit = {
      run: () => {
        const t0 = performance.now()
        const out = run()
        add('COMMIT', performance.now() - t0)
        return out
      },
    }
  }
  const tx = inner.tx.bind(db)
  inner.tx = (work) => {
    transactions++
    const t0 = performance.now()
    return tx(work).finally(() => add('(whole transaction, wall time)', performance.now() - t0))
  }
  return {
    take: () => {
      const out = [...rows.values()].sort((a, b) => b.totalMs - a.totalMs)
      const n = transactions
      rows.clear()
      transactions = 0
      return { rows: out, transactions: n }
    },
  }
}

export class Profiler {
  private session: Session | null = null
  private timing: ReturnType<typeof timeStatements> | null = null

  constructor(private readonly db: Db) {}

  async start(): Promise<void> {
    this.timing ??= timeStatements(this.db)
    this.timing.take()
    this.session = new Session()
    this.session.connect()
    await this.session.post('Profiler.enable')
    await this.session.post('Profiler.setSamplingInterval', { interval: 500 })
    await this.session.post('Profiler.start')
  }

  async stop(): Promise<ProfileResult> {
    const s = this.session
    if (!s || !this.timing) throw new Error('profile not started')
    const { profile } = await s.post('Profiler.stop')
    s.disconnect()
    this.session = null
    const t = this.timing.take()
    return { profile: JSON.stringify(profile), statements: t.rows, transactions: t.transactions }
  }
}
