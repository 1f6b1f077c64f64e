import type { Db, Sql } from '../store/db.js'

type Job<T> = (sql: Sql) => Promise<T>

interface Pending {
  job: Job<unknown>
  resolve: (v: unknown) => void
  reject: (e: unknown) => void
}

/**
 * Group commit for the scoring write path: jobs submitted in the same tick run one after another in a
 * single transaction, each inside its own savepoint. Every job sees the rows of the jobs before it
 * (velocity history stays exact), one failing job is rolled back alone, and concurrent requests share
 * one commit instead of paying for one each.
 */
export class GroupWriter {
  private queue: Pending[] = []
  private running = false

  constructor(
    private readonly db: Db,
    private readonly maxGroup = 256,
  ) {}

  submit<T>(job: Job<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ job, resolve: resolve as (v: unknown) => void, reject })
      if (!this.running) {
        this.running = true
        setImmediate(() => void this.drain())
      }
    })
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.queue.splice(0, this.maxGroup)
      const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = []
      try {
        await this.db.tx(async (sql) => {
          for (const item of group) {
            await sql.run('SAVEPOINT score_job')
            try {
              const value = await item.job(sql)
              await sql.run('RELEASE SAVEPOINT score_job')
              outcomes.push({ ok: true, value })
            } catch (error) {
              await sql.run('ROLLBACK TO SAVEPOINT score_job')
              await sql.run('RELEASE SAVEPOINT score_job')
              outcomes.push({ ok: false, error })
            }
          }
        })
      } catch (error) {
        // The commit itself failed: nothing of the group was written.
        for (const item of group) item.reject(error)
        continue
      }
      group.forEach((item, i) => {
        const o = outcomes[i]!
        if (o.ok) item.resolve(o.value)
        else item.reject(o.error)
      })
    }
    this.running = false
  }
}
