import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/** How often the worker folds the WAL back into the database file. */
export const CHECKPOINT_EVERY_MS = 250

/** WAL frames (4 KB pages) past which the worker forces the WAL back to its start. */
export const RESTART_FRAMES = 16_384

// Runs in a worker thread on its own connection. PASSIVE never waits for and never blocks the writer;
// once every frame is copied back, the next write transaction restarts the WAL from its beginning. Under
// sustained writes a new commit usually lands before that point is reached, so the WAL would grow without
// bound (and every page read would search a longer WAL index): past RESTART_FRAMES a RESTART checkpoint
// briefly holds the writer (the server's BEGIN waits for it off the event loop) and the WAL starts over.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.file)
db.pragma('busy_timeout = 200')
const tick = () => {
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)')
    if (r && r.log > workerData.restartFrames) db.pragma('wal_checkpoint(RESTART)')
  } catch {}
}
const timer = setInterval(tick, workerData.everyMs)
parentPort.on('message', (m) => {
  if (m !== 'close') return
  clearInterval(timer)
  tick()
  db.close()
  parentPort.postMessage('closed')
})
`

/** The SQLite WAL checkpoint, off the request thread: COMMIT never pays for it. */
export class Checkpointer {
  private readonly worker: Worker

  constructor(file: string, everyMs = CHECKPOINT_EVERY_MS) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3')
    this.worker = new Worker(WORKER, {
      eval: true,
      workerData: { file, driver, everyMs, restartFrames: RESTART_FRAMES },
    })
    this.worker.unref()
    this.worker.on('error', () => {
      // A failed checkpoint thread only lets the WAL grow; the next erasure truncates it.
    })
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      const done = () => resolve()
      this.worker.once('message', done)
      this.worker.once('exit', done)
      this.worker.postMessage('close')
    })
    await this.worker.terminate()
  }
}
