/**
 * CPU time of the processes under test, read from /proc: utime + stime of a process, which counts all
 * its threads (the checkpoint worker, libuv's pool, V8's helpers). On PostgreSQL the backends serving
 * the server are added: the server's connections carry an application_name of their own, and a sampler
 * follows their pids while a measurement runs, so a backend that starts or ends inside it still counts.
 */
import { readdirSync, readFileSync } from 'node:fs'
import pg from 'pg'

/** Clock ticks per second of utime/stime (`getconf CLK_TCK`; 100 on Linux). */
const TICKS_PER_SEC = 100

/** utime + stime of a process (all threads) in milliseconds; null once the process is gone. */
export function processCpuMs(pid: number): number | null {
  return statCpuMs(`/proc/${pid}/stat`)
}

function statCpuMs(path: string): number | null {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return null
  }
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis are fixed.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ')
  // rest[0] is field 3 (state); utime and stime are fields 14 and 15.
  return ((Number(rest[11]) + Number(rest[12])) * 1000) / TICKS_PER_SEC
}

/** CPU per thread name of a process (for the profile: how much the checkpoint worker takes). */
export function threadCpuMs(pid: number): Map<string, number> {
  const out = new Map<string, number>()
  let tids: string[]
  try {
    tids = readdirSync(`/proc/${pid}/task`)
  } catch {
    return out
  }
  for (const tid of tids) {
    const ms = statCpuMs(`/proc/${pid}/task/${tid}/stat`)
    let name = '?'
    try {
      name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim()
    } catch {}
    if (ms !== null) out.set(`${name} (${tid})`, ms)
  }
  return out
}

/** The PostgreSQL backends a server uses: found by the application_name its pool connects with. */
export interface BackendWatch {
  /** Starts following the backends; `stop` returns the CPU milliseconds they spent in between. */
  start(): Promise<void>
  stop(): Promise<number>
  close(): Promise<void>
}

export async function watchBackends(url: string, applicationName: string): Promise<BackendWatch> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
  await client.connect()
  // pid -> [cpu when first seen in this window, cpu last seen]
  let seen = new Map<number, [number, number]>()
  let timer: NodeJS.Timeout | null = null
  let sampling: Promise<void> = Promise.resolve()

  async function pids(): Promise<number[]> {
    const r = await client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
      [applicationName],
    )
    return r.rows.map((x) => x.pid)
  }

  /** A backend first seen after the window began started inside it: all its CPU counts. */
  async function sample(fromZero: boolean): Promise<void> {
    for (const pid of await pids()) {
      const ms = processCpuMs(pid)
      if (ms === null) continue
      const had = seen.get(pid)
      if (had) had[1] = ms
      else seen.set(pid, [fromZero ? 0 : ms, ms])
    }
  }

  return {
    async start() {
      seen = new Map()
      await sample(false)
      timer = setInterval(() => {
        sampling = sampling.then(() => sample(true)).catch(() => {})
      }, 200)
    },
    async stop() {
      if (timer) clearInterval(timer)
      timer = null
      await sampling
      await sample(true)
      let total = 0
      for (const [first, last] of seen.values()) total += last - first
      return total
    },
    async close() {
      if (timer) clearInterval(timer)
      await sampling
      await client.end().catch(() => {})
    },
  }
}

/** Measures the CPU a server (and its backends) spends while `fn` runs. */
export async function cpuDuring<T>(
  pid: number,
  backends: BackendWatch | null,
  fn: () => Promise<T>,
): Promise<{ result: T; serviceMs: number; backendMs: number; writtenBytes: number | null }> {
  await backends?.start()
  const before = processCpuMs(pid) ?? 0
  const wrote = writtenBytes(pid)
  const result = await fn()
  const serviceMs = (processCpuMs(pid) ?? 0) - before
  const wroteAfter = writtenBytes(pid)
  const backendMs = backends ? await backends.stop() : 0
  return {
    result,
    serviceMs,
    backendMs,
    writtenBytes: wrote === null || wroteAfter === null ? null : wroteAfter - wrote,
  }
}

/**
 * Bytes a process caused to be written to storage (/proc/<pid>/io write_bytes: on SQLite, the WAL and
 * the checkpoint's copy into the database file); null where the kernel does not report it.
 */
export function writtenBytes(pid: number): number | null {
  try {
    const m = /^write_bytes: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))
    return m ? Number(m[1]) : null
  } catch {
    return null
  }
}
