import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import {
  Checkpointer,
  RESTART_FRAMES,
  RESTART_LATE_FRAMES,
  RESTART_LATE_PENDING,
  RESTART_LIMITS,
  RESTART_MAX_PENDING,
  shouldRestart,
} from '../../src/store/engine/checkpointer.js'

describe('when the checkpoint worker restarts the WAL', () => {
  const rows: [string, number, number, boolean][] = [
    ['a short WAL is left to PASSIVE', RESTART_FRAMES, RESTART_FRAMES, false],
    ['a long WAL fully copied back', RESTART_FRAMES + 1, RESTART_FRAMES + 1, true],
    ['a long WAL with few frames left to copy under the lock', 20_000, 20_000 - RESTART_MAX_PENDING, true],
    ['a long WAL with more than that left: not yet', 20_000, 20_000 - RESTART_MAX_PENDING - 1, false],
    [
      'a very long WAL accepts more left to copy',
      RESTART_LATE_FRAMES + 1,
      RESTART_LATE_FRAMES + 1 - 2_000,
      true,
    ],
    [
      'but never more than the late bound',
      RESTART_LATE_FRAMES + 1,
      RESTART_LATE_FRAMES - RESTART_LATE_PENDING,
      false,
    ],
  ]
  it.each(rows)('%s', (_name, log, checkpointed, restart) => {
    expect(shouldRestart({ log, checkpointed }, RESTART_LIMITS)).toBe(restart)
  })
})

describe('the checkpoint worker', () => {
  it('runs (its source with the decision compiles) and copies the WAL back into the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verdict-ckpt-'))
    const file = join(dir, 'c.db')
    const db = new Database(file)
    try {
      db.pragma('journal_mode = WAL')
      db.pragma('wal_autocheckpoint = 0')
      db.exec('CREATE TABLE t (v TEXT)')
      const insert = db.prepare('INSERT INTO t (v) VALUES (?)')
      db.transaction(() => {
        for (let i = 0; i < 500; i++) insert.run('x'.repeat(2_000))
      })()
      const before = statSync(file).size
      const worker = new Checkpointer(file, 20)
      try {
        const deadline = Date.now() + 10_000
        while (statSync(file).size === before && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 20))
        // About 1 MB of rows reached the database file: only the worker copies it there.
        expect(statSync(file).size - before).toBeGreaterThan(900_000)
      } finally {
        await worker.close()
      }
    } finally {
      db.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('closes at once when it could not open the file and ended', async () => {
    const worker = new Checkpointer(join(tmpdir(), 'verdict-no-such-dir', 'x', 'c.db'), 20)
    await new Promise((r) => setTimeout(r, 500))
    await worker.close()
  })
})
