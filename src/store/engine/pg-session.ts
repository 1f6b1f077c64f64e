import type pg from 'pg'
import type { Connection, Execution, Outcome } from './pg-statement.js'

interface InFlight {
  execution: Execution
  /** Whether this statement's Parse went out with it. */
  parsed: boolean
  resolve: (o: Outcome) => void
  reject: (e: Error) => void
}

/**
 * A pipelined stretch of one transaction's connection: statements are written as they come, each followed
 * by a Flush (so the server sends its answer without waiting for a Sync), and answered in the order they
 * were written, while the caller goes on preparing the next ones. Units of work that touch nothing in
 * common (store/engine/overlap.ts) each keep one statement in flight: the server works on one while this
 * process works on another's answer. Statements written in the same tick share one write.
 *
 * To node-postgres the session is one query object, active from `open` until `end`'s Sync is answered:
 * `name` and `text` follow the statement being answered, so its ParseComplete and error bookkeeping
 * (which statements the connection has prepared) stays right. The first failure fails every statement
 * in flight and every later one (the server skips all it is sent up to the Sync).
 */
export class Session {
  callback: ((err: Error | null) => void) | undefined = undefined
  private connection: Connection | null = null
  private readonly inFlight: InFlight[] = []
  private failure: Error | null = null
  private writing = false
  private ending: Promise<void> | null = null
  private ended: Promise<void> = Promise.resolve()
  private settled = false
  private readonly opened: Promise<void>
  private markOpened!: () => void

  constructor() {
    this.opened = new Promise((resolve) => {
      this.markOpened = resolve
    })
  }

  /** Makes the session the client's active query (at once on a client that waits for nothing). */
  static async open(client: pg.PoolClient): Promise<Session> {
    const session = new Session()
    const ended = new Promise<void>((resolve, reject) => {
      const query = client.query as unknown as (
        this: pg.PoolClient,
        q: Session,
        cb: (err: Error | null) => void,
      ) => void
      query.call(client, session, (err) => (err ? reject(err) : resolve()))
    })
    session.ended = ended
    // Unhandled until `end` is awaited: a failure is also reported through the statements.
    ended.catch(() => {})
    // A client that cannot take the query (its connection lost) fails it instead of submitting it.
    await session.opened
    if (session.failure) throw session.failure
    return session
  }

  get name(): string | undefined {
    return this.inFlight[0]?.execution.name
  }
  get text(): string | undefined {
    return this.inFlight[0]?.execution.text
  }

  submit(connection: Connection): null {
    this.connection = connection
    this.markOpened()
    return null
  }

  /** Writes the statement (sent with the others of this tick) and resolves with its answer. */
  send(execution: Execution): Promise<Outcome> {
    if (this.failure) return Promise.reject(this.failure)
    if (this.ending) return Promise.reject(new Error('the session has ended'))
    const c = this.connection!
    this.batchWrites(c)
    const parsed = execution.write(c)
    return new Promise((resolve, reject) => {
      this.inFlight.push({ execution, parsed, resolve, reject })
    })
  }

  /**
   * Ends the session with a Sync: resolves once every statement is answered and the server is ready;
   * rejects with the first failure (after which the Sync has already gone out).
   */
  end(): Promise<void> {
    if (!this.ending) {
      if (!this.failure) {
        const c = this.connection!
        this.batchWrites(c)
        c.sync()
      }
      this.ending = this.ended
    }
    return this.ending
  }

  /** One write (and one Flush) for everything written until the next tick. */
  private batchWrites(c: Connection): void {
    if (this.writing) return
    this.writing = true
    c.stream.cork()
    process.nextTick(() => {
      this.writing = false
      if (!this.ending && !this.failure) c.flush()
      c.stream.uncork()
    })
  }

  handleRowDescription(msg: Parameters<Execution['handleRowDescription']>[0]): void {
    this.inFlight[0]?.execution.handleRowDescription(msg)
  }
  handleDataRow(msg: Parameters<Execution['handleDataRow']>[0]): void {
    this.inFlight[0]?.execution.handleDataRow(msg)
  }
  handleCommandComplete(msg: { text?: string }): void {
    const done = this.inFlight.shift()
    if (!done) return
    done.execution.handleCommandComplete(msg)
    try {
      done.resolve(done.execution.outcome())
    } catch (err) {
      done.reject(err as Error)
    }
  }
  handleEmptyQuery(): void {
    this.inFlight.shift()?.resolve({ rows: [], rowCount: 0 })
  }
  handlePortalSuspended(): void {}
  handleCopyInResponse(connection: Connection): void {
    connection.sendCopyFail('No source stream defined')
  }
  handleCopyData(): void {}

  handleReadyForQuery(): void {
    this.finish(null)
  }

  handleError(err: Error): void {
    this.failure = err
    const c = this.connection
    // The statements after the failed one were skipped, their Parse too: this connection has not
    // prepared them (node-postgres forgets the failed one itself, by `name`).
    const failed = this.inFlight.splice(0)
    failed.forEach((f, i) => {
      if (i > 0 && f.parsed && c) delete c.submittedNamedStatements[f.execution.name]
      f.reject(err)
    })
    // node-postgres no longer routes anything to this session: the Sync's answer only makes the
    // connection ready again. Without one the server would wait for it. (A lost connection takes none.)
    if (c && !this.ending) {
      try {
        c.sync()
      } catch {}
    }
    this.markOpened()
    this.finish(err)
  }

  private finish(err: Error | null): void {
    if (this.settled) return
    this.settled = true
    this.callback?.(err)
  }
}
