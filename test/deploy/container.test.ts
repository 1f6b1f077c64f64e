import { spawnSync } from 'node:child_process'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { eventually } from '../helpers/app.js'

/**
 * Builds the Dockerfile and runs the image: the server answers /livez and /readyz, runs as its own
 * user, reports healthy and stops with status 0 on SIGTERM. It needs a container engine and a base
 * image with node >= 20.19 (no image registry is reachable from the test machines), so it runs only
 * when VERDICT_CONTAINER_BASE names one (docs/deployment.md, "Building without a registry"); otherwise
 * it is SKIPPED. VERDICT_PODMAN is the engine command (default `podman`, e.g. `podman --runtime runc`).
 * The build installs the npm packages from the registry: minutes, so CI does not run it.
 */
const BASE = process.env['VERDICT_CONTAINER_BASE']
const ENGINE = (process.env['VERDICT_PODMAN'] ?? 'podman').split(/\s+/)
const hasEngine = spawnSync(ENGINE[0]!, ['--version']).status === 0
const enabled = Boolean(BASE) && hasEngine
if (!enabled)
  console.warn(
    `\n*** container test SKIPPED: ${hasEngine ? 'VERDICT_CONTAINER_BASE is not set' : `no ${ENGINE[0]} on PATH`} ***\n`,
  )

const ROOT = join(import.meta.dirname, '..', '..')
const TAG = `localhost/verdict:test-${process.pid}`
const NAME = `verdict-test-${process.pid}`

function engine(args: string[], timeoutMs = 60_000): { status: number; out: string } {
  const r = spawnSync(ENGINE[0]!, [...ENGINE.slice(1), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  })
  return { status: r.status ?? -1, out: `${r.stdout}${r.stderr}` }
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  await new Promise((r) => server.close(r))
  return port
}

const status = async (url: string) => {
  try {
    return (await fetch(url)).status
  } catch {
    return 0
  }
}

describe.skipIf(!enabled)('the container image', () => {
  afterAll(() => {
    engine(['rm', '-f', NAME])
    engine(['rmi', '-f', TAG])
  })

  it('builds, runs as its own user, answers the probes, reports healthy and stops cleanly', async () => {
    const built = engine(
      ['build', '--format', 'docker', '--network', 'host', '--build-arg', `BASE=${BASE}`, '-t', TAG, '.'],
      1_500_000,
    )
    expect(built.status, built.out.slice(-4000)).toBe(0)
    expect(engine(['image', 'inspect', '--format', '{{.Config.User}}', TAG]).out.trim()).toBe('verdict')

    const [port, admin] = [await freePort(), await freePort()]
    const run = engine([
      'run',
      '-d',
      '--name',
      NAME,
      '--network',
      'host',
      '-e',
      `PORT=${port}`,
      '-e',
      `VERDICT_ADMIN_PORT=${admin}`,
      '-e',
      'HOST=127.0.0.1',
      TAG,
    ])
    expect(run.status, run.out).toBe(0)
    const up = await eventually(
      async () => (await status(`http://127.0.0.1:${admin}/readyz`)) === 200,
      120_000,
      500,
    )
    expect(up, engine(['logs', NAME]).out).toBe(true)
    expect(await status(`http://127.0.0.1:${admin}/livez`)).toBe(200)
    expect(await status(`http://127.0.0.1:${port}/v1/health`)).toBe(200)
    // The process runs as the image's user; the SQLite database is in the /data volume.
    expect(engine(['exec', NAME, 'id', '-un']).out.trim()).toBe('verdict')
    expect(engine(['exec', NAME, 'ls', '/data']).out).toContain('verdict.db')
    expect(engine(['healthcheck', 'run', NAME]).status).toBe(0)
    // The first start logged the default tenant's key: the same start as `npm start`.
    expect(engine(['logs', NAME]).out).toContain('first start: created tenant')
    expect(engine(['stop', '--time', '20', NAME]).status).toBe(0)
    expect(engine(['inspect', '--format', '{{.State.ExitCode}}', NAME]).out.trim()).toBe('0')
  }, 1_800_000)
})
