import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A PostgreSQL server of the test's own (initdb in a temporary directory, its own port), so a test may
 * stop and restart it without touching the shared server other tests use. Runs as the `postgres` user
 * (initdb refuses root). Null when the binaries or that user are missing.
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

  static create(port: number): OwnPostgres | null {
    const root = '/usr/lib/postgresql'
    if (!existsSync(root)) return null
    const version = readdirSync(root).sort().at(-1)
    if (!version) return null
    const bin = join(root, version, 'bin')
    if (spawnSync('id', ['postgres']).status !== 0) return null
    const dir = mkdtempSync(join(tmpdir(), 'verdict-own-pg-'))
    chmodSync(dir, 0o700)
    const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim()
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim()
    chownSync(dir, Number(ids), Number(gid))
    const pg = new OwnPostgres(bin, dir, port)
    pg.as('initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync'])
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
