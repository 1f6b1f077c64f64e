import { createHash } from 'node:crypto'
import pg from 'pg'
import {
  type BatchOp,
  blindAnswer,
  type Db,
  type DbStats,
  type Op,
  type OverlapPlan,
  type Param,
  runAsync,
  type Step,
  StorageUnavailable,
  type Work,
} from './db.js'
import { pipelined } from './overlap.js'
import { ReadCoalescer } from './pg-reads.js'
import { Session } from './pg-session.js'
import { Execution, type Outcome, type Prepared, send } from './pg-statement.js'

// COUNT(*) and BIGINT columns (millisecond times) fit in a double; read them as numbers.
pg.types.setTypeParser(20, (v) => Number(v))
pg.types.setTypeParser(1700, (v) => Number(v))

/** Turns `?` placeholders into `$n` (our SQL never has `?` inside string literals). */
function toPg(sql: string): string {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
}

/**
 * Connection-level failures (server down, restarting, pool exhausted) and statements cancelled by the
 * statement timeout answer 503, not 500.
 */
const UNAVAILABLE_CODES = new Set([
  '57014',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
])

function unavailable(err: unknown): Error {
  const e = err as { code?: string; message?: string }
  if (
    (e.code && (UNAVAILABLE_CODES.has(e.code) || /^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT)$/.test(e.code))) ||
    /timeout exceeded when trying to connect|Connection terminated|connection timeout/i.test(e.message ?? '')
  )
    return new StorageUnavailable(`database unavailable (${e.code ?? e.message})`)
  return err as Error
}

const BEGIN: Op = { kind: 'run', sql: 'BEGIN', params: [] }
const COMMIT: Op = { kind: 'run', sql: 'COMMIT', params: [] }

export interface PostgresOptions {
  schema?: string
  max?: number
  /** A query running longer is cancelled by the server, so one slow query cannot hold a connection. */
  statementTimeoutMs?: number
  /** Waiting longer for a free connection (or a new one) fails the request with 503. */
  connectTimeoutMs?: number
}

export class PostgresDb implements Db {
  readonly dialect = 'postgres' as const
  private readonly pool: pg.Pool
  private readonly prepared = new Map<string, Prepared>()
  /** Reads outside transactions, sent together when they arrive together (pg-reads.ts). */
  private readonly reads = new ReadCoalescer((op) => this.step(this.pool, op))
  private vacuum: { running: Promise<void> | null; next: Promise<void> | null; tables: Set<string> } = {
    running: null,
    next: null,
    tables: new Set(),
  }

  constructor(url: string, options: PostgresOptions = {}) {
    const statementTimeout = options.statementTimeoutMs ?? 10_000
    // Generic plans: the event tables are partitioned by month, and with the default mode PostgreSQL
    // keeps re-planning their prepared statements for each execution (a custom plan prunes the
    // partitions at planning and always looks cheaper than the generic plan's full partition list),
    // which cost a velocity read about 0.5 ms instead of 0.1 ms. Generic plans prune at execution.
    const settings = [
      `-c statement_timeout=${statementTimeout}`,
      '-c idle_in_transaction_session_timeout=30000',
      '-c plan_cache_mode=force_generic_plan',
    ]
    if (options.schema) settings.push(`-c search_path=${options.schema}`)
    this.pool = new pg.Pool({
      connectionString: url,
      max: options.max ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      options: settings.join(' '),
    })
    this.pool.on('error', () => {
      // An idle client lost its connection; the pool replaces it on next use.
    })
  }

  /** Named statements make each connection parse and plan a query text once. */
  private q(sql: string): Prepared {
    let p = this.prepared.get(sql)
    if (!p) {
      p = { name: `v_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`, text: toPg(sql) }
      this.prepared.set(sql, p)
    }
    return p
  }

  /** The statement that runs `op` on PostgreSQL, and how its rows become the op's result. */
  private statement(op: Op): { execution: Execution; result: (o: Outcome) => unknown } {
    const kind = op.kind
    return {
      execution: new Execution(this.q(op.sql), op.params),
      result: (o) => (kind === 'all' ? o.rows : kind === 'get' ? o.rows[0] : o.rowCount),
    }
  }

  /**
   * The statements that run `op`: a batch's parts each as a statement of its own, sent together and
   * answered in order on one connection (one round trip), each returning its own rows. Composing them
   * into one statement (every part a `json_agg` subquery) cost the server more per part: docs/storage.md.
   */
  private parts(op: Op | BatchOp): { executions: Execution[]; result: (o: readonly Outcome[]) => unknown } {
    if (op.kind !== 'batch') {
      const s = this.statement(op)
      return { executions: [s.execution], result: (o) => s.result(o[0]!) }
    }
    const each = op.ops.map((o) => this.statement(o))
    return { executions: each.map((s) => s.execution), result: (o) => each.map((s, i) => s.result(o[i]!)) }
  }

  /**
   * The statements of `ops` in one message with one Sync, one round trip (written in one tick on a
   * pipelined stretch of the connection, pg-session.ts); their results.
   */
  private async execPipeline(client: pg.PoolClient, ops: readonly (Op | BatchOp)[]): Promise<unknown[]> {
    const sent = ops.map((op) => this.parts(op))
    const outcomes = await this.inSession(client, (session) => {
      const answers = Promise.all(sent.flatMap((s) => s.executions).map((e) => session.send(e)))
      // The Sync goes in the same write: one round trip, not a Flush's and then the Sync's.
      void session.end()
      return answers
    })
    let at = 0
    return sent.map((s) => {
      const n = s.executions.length
      at += n
      return s.result(outcomes.slice(at - n, at))
    })
  }

  /**
   * `work` on a pipelined stretch of the connection (pg-session.ts), ended with a Sync before returning
   * or throwing, so the connection is ready for the transaction's next statement or its ROLLBACK.
   */
  private async inSession<T>(client: pg.PoolClient, work: (session: Session) => Promise<T>): Promise<T> {
    const session = await Session.open(client)
    let result: T | undefined
    let failure: unknown = null
    try {
      result = await work(session)
    } catch (err) {
      failure = err
    }
    try {
      await session.end()
    } catch (err) {
      failure ??= err
    }
    if (failure !== null) throw failure
    return result as T
  }

  private async execOp(target: pg.Pool | pg.PoolClient | Session, op: Op | BatchOp): Promise<unknown> {
    if (target instanceof Session) {
      const p = this.parts(op)
      return p.result(await Promise.all(p.executions.map((e) => target.send(e))))
    }
    if (op.kind === 'batch') {
      if (!(target instanceof pg.Pool)) return (await this.execPipeline(target, [op]))[0]
      // Outside a transaction: on one pooled connection, so its parts still share one round trip.
      const client = await target.connect()
      try {
        return (await this.execPipeline(client, [op]))[0]
      } finally {
        client.release()
      }
    }
    const s = this.statement(op)
    return s.result(await send(target, s.execution))
  }

  /** A step of a unit of work on `client`, outside or inside a transaction. */
  private step(client: pg.Pool | pg.PoolClient, op: Step): Promise<unknown> {
    if (op.kind !== 'overlap') return this.execOp(client, op)
    if (client instanceof pg.Pool)
      return this.inOrder(op.plan, (w) => runAsync(w, (o) => this.step(client, o)))
    return this.overlap(client, op.plan)
  }

  /** Outside a transaction (any pooled connection may answer each statement): one item after another. */
  private async inOrder(plan: OverlapPlan, run: (w: Work<unknown>) => Promise<unknown>): Promise<unknown[]> {
    const results: unknown[] = []
    for (const item of plan.items) results.push(await run(plan.work(item)))
    return results
  }

  /** Inside a transaction: the items side by side, each running item with a statement in flight. */
  private overlap(client: pg.PoolClient, plan: OverlapPlan): Promise<unknown[]> {
    return this.inSession(client, (session) => {
      const exec = (op: Step): Promise<unknown> =>
        op.kind === 'overlap' ? pipelined(op.plan, run) : this.execOp(session, op)
      const run = (w: Work<unknown>) => runAsync(w, exec)
      return pipelined(plan, run)
    })
  }

  private async direct<T>(op: Op): Promise<T> {
    try {
      return (await this.execOp(this.pool, op)) as T
    } catch (err) {
      throw unavailable(err)
    }
  }

  all<T>(sql: string, params: readonly Param[] = []): Promise<T[]> {
    return this.direct<T[]>({ kind: 'all', sql, params })
  }
  get<T>(sql: string, params: readonly Param[] = []): Promise<T | undefined> {
    return this.direct<T | undefined>({ kind: 'get', sql, params })
  }
  run(sql: string, params: readonly Param[] = []): Promise<number> {
    return this.direct<number>({ kind: 'run', sql, params })
  }

  async read<T>(work: () => Work<T>): Promise<T> {
    try {
      return await this.reads.read(work())
    } catch (err) {
      throw unavailable(err)
    }
  }

  async tx<T>(work: () => Work<T>): Promise<T> {
    let client: pg.PoolClient
    try {
      client = await this.pool.connect()
    } catch (err) {
      throw unavailable(err)
    }
    try {
      return await this.transact(client, work())
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {})
      throw unavailable(err)
    } finally {
      client.release()
    }
  }

  /**
   * BEGIN, the unit of work and COMMIT, with as few round trips as the work allows: a statement whose
   * result the work does not read (`blind`: the entity locks, an event's writes) waits and goes out in
   * one message with the next statement whose result it does read, or with COMMIT (`execPipeline`).
   * BEGIN is the first such statement, so it always travels with the work's first read: BEGIN, the
   * entity locks and a scoring group's first reads are one round trip, and a lone event's writes, its
   * group's end and COMMIT another. The server runs a message's statements in order (each takes its
   * snapshot when it is reached, after the one before has finished); a failure of any of them is thrown
   * into the work where it waits, or fails the transaction at COMMIT.
   */
  private async transact<T>(client: pg.PoolClient, it: Work<T>): Promise<T> {
    const waiting: (Op | BatchOp)[] = [BEGIN]
    /** Sends what waits (and `op`, whose result is the last of the message's). */
    const flush = async (op?: Op | BatchOp): Promise<unknown> => {
      const ops = op ? [...waiting, op] : [...waiting]
      waiting.length = 0
      if (ops.length === 0) return undefined
      const results = await this.execPipeline(client, ops)
      return results[results.length - 1]
    }
    let step = it.next()
    while (!step.done) {
      const op = step.value
      if (op.kind !== 'overlap' && op.blind) {
        waiting.push(op)
        step = it.next(blindAnswer(op))
        continue
      }
      let value: unknown
      try {
        if (op.kind === 'overlap') {
          await flush()
          value = await this.step(client, op)
        } else value = waiting.length > 0 ? await flush(op) : await this.execOp(client, op)
      } catch (err) {
        step = it.throw(err)
        continue
      }
      step = it.next(value)
    }
    await flush(COMMIT)
    return step.value
  }

  async exec(script: string): Promise<void> {
    await this.pool.query(script)
  }

  /**
   * Dead tuples of deleted rows are cleared by VACUUM; WAL segments and backups are outside our reach.
   * VACUUMs are coalesced: while one runs, every further request joins the single next one, so a burst
   * of erasures costs at most two VACUUM passes at a time and never exhausts the pool.
   */
  reclaim(tables: readonly string[]): Promise<void> {
    for (const t of tables) {
      if (!/^[a-z_]+$/.test(t)) return Promise.reject(new Error(`bad table name ${t}`))
    }
    const v = this.vacuum
    for (const t of tables) v.tables.add(t)
    if (v.next) return v.next
    const pass: Promise<void> = (v.running ?? Promise.resolve())
      .catch(() => {})
      .then(async () => {
        v.running = pass
        v.next = null
        const batch = [...v.tables]
        v.tables = new Set()
        for (const t of batch) await this.pool.query(`VACUUM ${t}`)
      })
      .finally(() => {
        if (v.running === pass) v.running = null
      })
    v.next = pass
    return pass
  }

  /** VACUUM leaves the bytes of dead rows in the page's free space until it is reused. */
  readonly reclaimErasesBytes = false

  /**
   * VACUUM FULL writes the table and its indexes into new files and drops the old ones. It holds the
   * table's exclusive lock while it copies, so it waits at most `lockTimeoutMs` for that lock and gives
   * up (the caller retries later) rather than queue writers behind it for long.
   */
  async rewrite(table: string, lockTimeoutMs: number): Promise<void> {
    if (!/^[a-z_]+$/.test(table)) throw new Error(`bad table name ${table}`)
    const client = await this.pool.connect()
    try {
      await client.query(`SET lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`)
      await client.query(`VACUUM FULL ${table}`)
    } finally {
      await client.query('RESET lock_timeout').catch(() => {})
      client.release()
    }
  }

  async ping(): Promise<boolean> {
    try {
      await this.pool.query('SELECT 1')
      return true
    } catch {
      return false
    }
  }

  stats(): DbStats {
    const p = this.pool
    return { pool: { total: p.totalCount, idle: p.idleCount, waiting: p.waitingCount } }
  }

  async close(): Promise<void> {
    await this.pool.end()
  }
}
