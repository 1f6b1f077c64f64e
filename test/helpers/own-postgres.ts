import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const ROOT = '/usr/lib/postgresql'

/** The newest installed server's bin directory, or why a private server cannot run here. */
function serverBin(): { bin: string } | { why: string } {
  if (!existsSync(ROOT)) return { why: `no PostgreSQL server binaries under ${ROOT}` }
  const version = readdirSync(ROOT).sort().at(-1)
  if (!version) return { why: `no PostgreSQL version under ${ROOT}` }
  if (spawnSync('id', ['postgres']).status !== 0) return { why: 'no `postgres` user to run initdb as' }
  if (process.getuid?.() !== 0) return { why: 'not root (runuser -u postgres needs it)' }
  return { bin: join(ROOT, version, 'bin') }
}

/** Why this machine cannot run a private PostgreSQL server (initdb), or null when it can. */
export function ownPostgresMissing(): string | null {
  const found = serverBin()
  return 'why' in found ? found.why : null
}

/**
 * A PostgreSQL server of the test's own (initdb in a temporary directory, its own port), so a test may
 * stop and restart it without touching the shared server other tests use. Runs as the `postgres` user
 * (initdb refuses root). Create it in a beforeAll and destroy it in the afterAll.
 */
export class OwnPostgres {
  private constructor(
    private readonly bin: string,
    private readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`
  }

  /** Runs initdb; throws when this machine cannot (ownPostgresMissing says why). */
  static create(port: number): OwnPostgres {
    const found = serverBin()
    if ('why' in found) throw new Error(found.why)
    const { bin } = found
    const dir = mkdtempSync(join(tmpdir(), 'verdict-own-pg-'))
    chmodSync(dir, 0o700)
    const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim()
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim()
    chownSync(dir, Number(ids), Number(gid))
    const pg = new OwnPostgres(bin, dir, port)
    try {
      pg.as('initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync'])
    } catch (err) {
      rmSync(dir, { recursive: true, force: true })
      throw err
    }
    return pg
  }

  private as(tool: string, args: string[]): void {
    execFileSync('runuser', ['-u', 'postgres', '--', join(this.bin, tool), ...args], { stdio: 'pipe' })
  }

  start(): void {
    this.as('pg_ctl', [
      '-D',
      join(this.dir, 'data'),
      '-l',
      join(this.dir, 'log'),
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      '-w',
      'start',
    ])
  }

  stop(): void {
    this.as('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', 'stop'])
  }

  destroy(): void {
    try {
      this.stop()
    } catch {
      // already stopped
    }
    rmSync(this.dir, { recursive: true, force: true })
  }
}
