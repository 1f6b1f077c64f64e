/**
 * `node dist/bench/pages.js [events] [group sizes…]` (`npm run bench:pages`): what a scored event writes
 * on SQLite, counted in pages rather than time, so the figure does not depend on how busy the machine
 * is. The server runs in this process on a fresh file with no checkpoint at all, and the score mix is
 * posted in groups of G concurrent requests (one group commit each). The WAL then holds every page every
 * commit wrote: frames per event is what COMMIT writes. The distinct pages of each window of 50, 250 or
 * 1000 events are what one checkpoint copies back (a checkpoint every 250 ms at 200, 1000 or 4000
 * events/s). Each written page is attributed to its table or index (dbstat). CPU per event is this
 * process's (inject, scoring, SQLite, no checkpoint): compare it only with another build run alongside.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore } from '../src/store/index.js'
import { scoringApp } from './score-app.js'
import { scoreBodies } from './score-mix.js'

const WAL_HEADER = 32
const FRAME_HEADER = 24

/** Page number of every frame in a WAL file, in order. */
function walFrames(file: string, pageSize: number): number[] {
  const buf = readFileSync(file)
  const pages: number[] = []
  for (let off = WAL_HEADER; off + FRAME_HEADER + pageSize <= buf.length; off += FRAME_HEADER + pageSize) {
    pages.push(buf.readUInt32BE(off))
  }
  return pages
}

async function measure(events: number, group: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'verdict-pages-'))
  const file = join(dir, 'pages.db')
  const store = await openStore({ kind: 'sqlite', file }, { sqlite: { checkpointer: false } })
  // No checkpoint at all during the run: the WAL keeps every frame every commit wrote.
  await store.db.exec('PRAGMA wal_autocheckpoint = 0')
  const { post, close } = await scoringApp(store, 'pages')
  const bodies = scoreBodies(events)
  // Warm-up: caches, prepared statements, the tenant's first rows; its WAL frames are left out.
  for (const b of scoreBodies(200)) await post(b)
  const pageSize = Number(await store.db.get<{ p: number }>('PRAGMA page_size').then((r) => r?.p ?? 4096))
  const before = walFrames(`${file}-wal`, pageSize).length
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < bodies.length; i += group) {
    const res = await Promise.all(bodies.slice(i, i + group).map(post))
    for (const r of res)
      if (r.statusCode !== 200) throw new Error(`score answered ${r.statusCode}: ${r.body}`)
  }
  const secs = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  const frames = walFrames(`${file}-wal`, pageSize).slice(before)
  // Commits are in order: a window of events covers the frames in proportion. A checkpoint copies each
  // distinct page of its window once; windows of 250 and 1000 events stand for a checkpoint every 250 ms
  // and every second at 1000 events/s.
  const distinct = (perWindow: number) => {
    const windows = Math.ceil(events / perWindow)
    let pages = 0
    for (let w = 0; w < windows; w++) {
      const from = Math.floor((w * frames.length) / windows)
      const to = Math.floor(((w + 1) * frames.length) / windows)
      pages += new Set(frames.slice(from, to)).size
    }
    return (pages / events).toFixed(2)
  }
  const rowBytes = await store.db.get<{ n: number; i: number; c: number }>(
    'SELECT AVG(LENGTH(inputs)) AS i, AVG(LENGTH(checks)) AS c, COUNT(*) AS n FROM events',
  )
  // Which table or index each written page belongs to (dbstat, after folding the WAL back).
  await store.db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  const owner = new Map<number, string>()
  for (const r of await store.db.all<{ name: string; pageno: number }>('SELECT name, pageno FROM dbstat')) {
    owner.set(Number(r.pageno), r.name)
  }
  const byName = new Map<string, number>()
  for (const p of frames)
    byName.set(owner.get(p) ?? '(free or other)', (byName.get(owner.get(p) ?? '(free or other)') ?? 0) + 1)
  const top = [...byName]
    .sort((a, b) => b[1] - a[1])
    .map(([name, k]) => `    ${name.padEnd(34)} ${(k / events).toFixed(2)}`)
    .join('\n')
  await close()
  await store.close()
  rmSync(dir, { recursive: true, force: true })
  const us = ((cpu.user + cpu.system) / events).toFixed(0)
  return `group ${String(group).padStart(3)}: ${(frames.length / events).toFixed(2)} WAL frames/event, checkpointed pages/event per window of 50 / 250 / 1000 events ${distinct(50)} / ${distinct(250)} / ${distinct(1000)}; event row: inputs ${Math.round(Number(rowBytes?.i))} B, checks ${Math.round(Number(rowBytes?.c))} B, CPU ${us} us/event, ${(events / secs).toFixed(0)} events/s\n${top}`
}

const [n = '3000', ...groups] = process.argv.slice(2)
for (const g of groups.length ? groups : ['1', '32']) console.log(await measure(Number(n), Number(g)))
process.exit(0)
