import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/**
 * How often the worker folds the WAL back into the database file. A page written by several commits
 * between two checkpoints is copied back once: at 1 s rather than 250 ms the checkpoint copies about
 * half the pages per event (docs/storage.md, issue 29), and the WAL stays far below RESTART_FRAMES.
 */
export const CHECKPOINT_EVERY_MS = 1000

/** WAL frames (4 KB pages) past which the worker forces the WAL back to its start. */
export const RESTART_FRAMES = 16_384

/**
 * Frames a PASSIVE pass may leave behind for the RESTART that follows it: RESTART holds the writer
 * while it copies them into the file, so few. Past RESTART_LATE_FRAMES (sustained saturation, when
 * passes rarely get that close) RESTART_LATE_PENDING is accepted rather than let the WAL grow on.
 */
export const RESTART_MAX_PENDING = 256
export const RESTART_LATE_FRAMES = 65_536
export const RESTART_LATE_PENDING = 2_048

/** The bounds above as the worker receives them. */
export const RESTART_LIMITS = {
  restartFrames: RESTART_FRAMES,
  maxPending: RESTART_MAX_PENDING,
  lateFrames: RESTART_LATE_FRAMES,
  latePending: RESTART_LATE_PENDING,
}

export interface WalState {
  /** Frames in the WAL, and how many of them are already copied into the database file. */
  log: number
  checkpointed: number
}

/**
 * Whether to RESTART the WAL after a PASSIVE pass left it in `r`. Written as a self-contained function:
 * the worker runs its source (`String(shouldRestart)`).
 */
export function shouldRestart(r: WalState, l: typeof RESTART_LIMITS): boolean {
  if (r.log <= l.restartFrames) return false
  const pending = r.log - r.checkpointed
  return pending <= (r.log > l.lateFrames ? l.latePending : l.maxPending)
}

// Runs in a worker thread on its own connection. PASSIVE never waits for and never blocks the writer;
// once every frame is copied back, the next write transaction restarts the WAL from its beginning. Under
// sustained writes a new commit usually lands before that point is reached, so the WAL would grow without
// bound (and every page read would search a longer WAL index). Past RESTART_FRAMES a RESTART resets it,
// but RESTART holds the writer lock while it copies what is left and waits for readers: it runs only
// right after a PASSIVE pass that left little to copy, and gives up after a few milliseconds of waiting.
// (A RESTART of a 40k-frame WAL on a 1M-event database held writers past the 2 s budget: requests got 503;
// one of up to 2,048 frames put a 1,000,000-event file's Poisson p99 at 38-95 ms, of up to 256 at 4.2-5.9 ms.)
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const shouldRestart = ${String(shouldRestart)}
const Database = require(workerData.driver)
const db = new Database(workerData.file)
const tick = () => {
  try {
    db.pragma('busy_timeout = 200')
    let [r] = db.pragma('wal_checkpoint(PASSIVE)')
    // A second pass copies what was committed during the first, so that little is left for RESTART.
    if (r && r.log > workerData.limits.restartFrames) [r] = db.pragma('wal_checkpoint(PASSIVE)')
    if (!r || !shouldRestart(r, workerData.limits)) return
    db.pragma('busy_timeout = 5')
    db.pragma('wal_checkpoint(RESTART)')
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
      workerData: { file, driver, everyMs, limits: RESTART_LIMITS },
    })
    this.worker.unref()
    this.worker.on('error', () => {
      // A failed checkpoint thread only lets the WAL grow; the next erasure truncates it.
    })
    this.worker.once('exit', () => {
      this.exited = true
    })
  }

  private exited = false

  async close(): Promise<void> {
    // A worker that already ended (it could not open the file) sends nothing more: do not wait for it.
    if (this.exited) return
    await new Promise<void>((resolve) => {
      const done = () => resolve()
      this.worker.once('message', done)
      this.worker.once('exit', done)
      this.worker.postMessage('close')
    })
    await this.worker.terminate()
  }
}
