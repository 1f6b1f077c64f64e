import pg from 'pg'
import type { Param } from './db.js'

type Parser = (text: string) => unknown

interface Field {
  name: string
  dataTypeID: number
}

/** A statement's result columns and their parsers, as its last RowDescription gave them. */
interface Shape {
  fields: readonly Field[]
  names: string[]
  parsers: Parser[]
}

/** A named prepared statement (its `$n` text) and the shape of its rows once seen. */
export interface Prepared {
  name: string
  text: string
  shape?: Shape
}

export interface Outcome {
  rows: unknown[]
  /** Rows the statement changed or returned (CommandComplete's count), 0 when it names none. */
  rowCount: number
}

/**
 * The connection methods a custom query object uses (as pg-cursor does); only `stream`'s cork and
 * `uncork` beyond what @types/pg declares.
 */
export interface Connection {
  stream: { cork(): void; uncork(): void }
  parsedStatements: Record<string, string>
  submittedNamedStatements: Record<string, string>
  parse(q: { name: string; text: string; types: never[] }): void
  bind(c: { statement: string; values: (string | null)[] }): void
  describe(m: { type: 'P'; name: string }): void
  execute(c: object): void
  sync(): void
  flush(): void
  sendCopyFail(message: string): void
}

/** `pg.utils.prepareValue` (what pg's own queries map parameters with), for anything but the usual. */
const prepareValue = (pg as unknown as { utils: { prepareValue: (v: unknown) => string | null } }).utils
  .prepareValue

function sameFields(a: readonly Field[], b: readonly Field[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++)
    if (a[i]!.name !== b[i]!.name || a[i]!.dataTypeID !== b[i]!.dataTypeID) return false
  return true
}

const NO_TYPES: never[] = []
const PORTAL = { type: 'P', name: '' } as const
const EXECUTE = {}

/**
 * One execution of a named prepared statement, handed to node-postgres as a custom query object (its
 * `Submittable` interface). It sends what pg's own Query sends (Parse once per connection, then Bind,
 * Describe, Execute, Sync) but skips what pg's Query does per call for generality: copying the query
 * config, an event emitter, a Result that rebuilds the row template and looks up every column's
 * parser from each RowDescription. The columns' parsers are kept with the statement and reused while
 * a RowDescription names the same columns and types. Rows come back as objects. `callback` is set by
 * node-postgres (pool.query or client.query).
 */
export class Execution {
  callback: ((err: Error | null, result?: Outcome) => void) | undefined = undefined
  readonly name: string
  readonly text: string
  private readonly values: (string | null)[]
  private shape: Shape | undefined
  private readonly rows: unknown[] = []
  private rowCount = 0
  /** A row that failed to parse: reported when the statement completes, as pg does. */
  private failed: Error | null = null
  private settled = false

  constructor(
    private readonly prepared: Prepared,
    params: readonly Param[],
  ) {
    this.name = prepared.name
    this.text = prepared.text
    // Mapped before anything is sent: a value that cannot be mapped throws here, not mid-protocol.
    const values = new Array<string | null>(params.length)
    for (let i = 0; i < params.length; i++) {
      const v = params[i]
      values[i] = typeof v === 'string' ? v : typeof v === 'number' ? String(v) : prepareValue(v)
    }
    this.values = values
  }

  submit(connection: Connection): null {
    const c = connection
    c.stream.cork()
    try {
      this.write(c)
      c.sync()
    } finally {
      c.stream.uncork()
    }
    return null
  }

  /** Parse (once per connection), Bind, Describe, Execute; true when this call sent the Parse. */
  write(c: Connection): boolean {
    let parsed = false
    if (c.parsedStatements[this.name] === undefined && c.submittedNamedStatements[this.name] === undefined) {
      c.parse({ name: this.name, text: this.text, types: NO_TYPES })
      c.submittedNamedStatements[this.name] = this.text
      parsed = true
    }
    c.bind({ statement: this.name, values: this.values })
    c.describe(PORTAL)
    c.execute(EXECUTE)
    return parsed
  }

  /** The rows read, or the row that failed to parse: once the statement has completed. */
  outcome(): Outcome {
    if (this.failed) throw this.failed
    return { rows: this.rows, rowCount: this.rowCount }
  }

  handleRowDescription(msg: { fields: Field[] }): void {
    let shape = this.prepared.shape
    if (shape === undefined || !sameFields(shape.fields, msg.fields)) {
      shape = {
        fields: msg.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })),
        names: msg.fields.map((f) => f.name),
        parsers: msg.fields.map((f) => pg.types.getTypeParser(f.dataTypeID, 'text') as Parser),
      }
      this.prepared.shape = shape
    }
    this.shape = shape
  }

  handleDataRow(msg: { fields: (string | null)[] }): void {
    if (this.failed) return
    const shape = this.shape!
    const raw = msg.fields
    try {
      const row: Record<string, unknown> = {}
      for (let i = 0; i < raw.length; i++) {
        const v = raw[i]
        row[shape.names[i]!] = v === null || v === undefined ? null : shape.parsers[i]!(v)
      }
      this.rows.push(row)
    } catch (err) {
      this.failed = err as Error
    }
  }

  handleCommandComplete(msg: { text?: string }): void {
    // `INSERT 0 3`, `UPDATE 3`, `SELECT 3`: the count is the last number.
    const m = /(\d+)$/.exec(msg.text ?? '')
    if (m) this.rowCount = Number(m[1])
  }

  handleReadyForQuery(): void {
    if (this.failed) this.finish(this.failed)
    else this.finish(null, this.outcome())
  }

  handleError(err: Error): void {
    this.finish(this.failed ?? err)
  }

  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(connection: Connection): void {
    connection.sendCopyFail('No source stream defined')
  }
  handleCopyData(): void {}

  private finish(err: Error | null, result?: Outcome): void {
    if (this.settled) return
    this.settled = true
    this.callback?.(err, result)
  }
}

/** Runs `e` on a pooled client or on the pool (which checks a client out for it and back in). */
export function send(target: pg.Pool | pg.PoolClient, e: Execution): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    // Both take a custom query object and a callback (client.query sets it as the query's callback,
    // pool.query wraps it to release the client first); @types/pg declares neither form.
    const query = target.query as unknown as (
      this: typeof target,
      q: Execution,
      cb: (err: Error | null, r?: Outcome) => void,
    ) => void
    query.call(target, e, (err, r) => (err ? reject(err) : resolve(r!)))
  })
}
