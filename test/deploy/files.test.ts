import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
// `yaml` comes with the OpenAPI tooling of the dev dependencies (no package of its own for this test).
import { parse, parseAllDocuments } from 'yaml'
import { EnvSchema } from '../../src/config/schema.js'
import { loadSettings } from '../../src/config/settings.js'

const ROOT = join(import.meta.dirname, '..', '..')
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')
const KNOWN = new Set(Object.keys(EnvSchema.properties))
const startScript = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start

/** The instructions of the Dockerfile, continuation lines joined. */
function dockerfile(): { op: string; args: string }[] {
  return read('Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [op = '', ...rest] = l.split(/\s+/)
      return { op: op.toUpperCase(), args: rest.join(' ') }
    })
}

describe('Dockerfile', () => {
  const lines = dockerfile()
  const final = lines.slice(lines.findLastIndex((l) => l.op === 'FROM'))

  it('builds in one stage and runs from the configurable base (the official Node image by default)', () => {
    expect(lines.find((l) => l.op === 'ARG')?.args).toMatch(/^BASE=node:20\.?\d*-/)
    const from = lines.filter((l) => l.op === 'FROM').map((l) => l.args)
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the Dockerfile's own variable syntax
    expect(from).toEqual(['${BASE} AS build', '${BASE}'])
    const build = lines.slice(
      0,
      lines.findLastIndex((l) => l.op === 'FROM'),
    )
    expect(build.some((l) => l.op === 'RUN' && l.args.includes('npm run build'))).toBe(true)
    expect(build.some((l) => l.op === 'RUN' && l.args.includes('npm prune --omit=dev'))).toBe(true)
  })

  it('runs as a user of its own with /data as the volume and a HEALTHCHECK on /livez', () => {
    const user = final.find((l) => l.op === 'USER')?.args
    expect(user).toBeDefined()
    expect(user).not.toMatch(/^(root|0)$/)
    expect(final.find((l) => l.op === 'VOLUME')?.args).toContain('/data')
    expect(final.find((l) => l.op === 'HEALTHCHECK')?.args).toContain('/livez')
    const env = final.find((l) => l.op === 'ENV')!.args
    for (const name of env.match(/[A-Z_]+(?==)/g) ?? [])
      if (name !== 'NODE_ENV') expect(KNOWN).toContain(name)
    expect(env).toContain('DATABASE_URL=/data/verdict.db')
  })

  it("starts with `npm start`'s steps, the command the README runs (exec: the server is PID 1)", () => {
    const cmd = JSON.parse(final.find((l) => l.op === 'CMD')!.args) as string[]
    expect(cmd.slice(0, 2)).toEqual(['sh', '-c'])
    expect(cmd[2]!.replace('exec ', '')).toBe(startScript)
    expect(read('README.md')).toContain('\nnpm start\n')
  })
})

describe('compose.yaml', () => {
  const compose = parse(read('compose.yaml'), { merge: true }) as {
    services: Record<
      string,
      { build?: string; image?: string; environment?: Record<string, string>; ports?: string[] }
    >
  }

  it('runs two verdict replicas, PostgreSQL and Redis', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['postgres', 'redis', 'verdict-1', 'verdict-2'])
    expect(compose.services['postgres']!.image).toMatch(/^postgres:/)
    expect(compose.services['redis']!.image).toMatch(/^redis:/)
  })

  it('gives the replicas settings the server accepts, on PostgreSQL and Redis', () => {
    for (const name of ['verdict-1', 'verdict-2']) {
      const s = compose.services[name]!
      expect(s.build).toBe('.')
      const env = Object.fromEntries(
        Object.entries(s.environment!).map(([k, v]) => [
          k,
          // Compose's ${VAR:-default} and ${VAR:?message} as compose would fill them in.
          String(v).replace(/\$\{(\w+)(?::-([^}]*)|:\?[^}]*)\}/g, (_m, n: string, d?: string) =>
            n === 'VERDICT_SECRET' ? 'x'.repeat(48) : (d ?? ''),
          ),
        ]),
      )
      for (const k of Object.keys(env)) expect(KNOWN).toContain(k)
      const settings = loadSettings(env)
      expect(settings.storage.kind).toBe('postgres')
      expect(settings.cluster.redisUrl).toMatch(/^redis:\/\/redis:/)
      expect(settings.cluster.nodes).toBe(2)
      expect(settings.observability.adminPort).toBe(9464)
      // The admin port is published on loopback only.
      expect(s.ports!.find((p) => p.endsWith(':9464'))).toMatch(/^127\.0\.0\.1:/)
    }
  })
})

describe('deploy/kubernetes/verdict.yaml', () => {
  const docs = parseAllDocuments(read('deploy/kubernetes/verdict.yaml')).map((d) => {
    expect(d.errors).toEqual([])
    return d.toJS() as { kind: string; spec?: Record<string, unknown> }
  })
  type Probe = { httpGet: { path: string; port: string } }
  type Container = {
    ports: { name: string; containerPort: number }[]
    env: { name: string; value: string }[]
    readinessProbe: Probe
    livenessProbe: Probe
    startupProbe: Probe
  }

  it('has a Secret, a Deployment and a Service', () => {
    expect(docs.map((d) => d.kind)).toEqual(['Secret', 'Deployment', 'Service'])
  })

  it('probes /livez and /readyz on the admin port the container sets', () => {
    const deployment = docs[1] as unknown as {
      spec: { template: { spec: { containers: Container[]; securityContext: { runAsUser: number } } } }
    }
    const pod = deployment.spec.template.spec
    const c = pod.containers[0]!
    for (const e of c.env) expect(KNOWN).toContain(e.name)
    const adminPort = Number(c.env.find((e) => e.name === 'VERDICT_ADMIN_PORT')!.value)
    expect(c.ports.find((p) => p.name === 'admin')!.containerPort).toBe(adminPort)
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'admin' })
    expect(c.livenessProbe.httpGet).toEqual({ path: '/livez', port: 'admin' })
    expect(c.startupProbe.httpGet).toEqual({ path: '/livez', port: 'admin' })
    // The image's user.
    expect(read('Dockerfile')).toContain(`--uid ${pod.securityContext.runAsUser}`)
  })

  it('keeps the admin port out of the Service', () => {
    const service = docs[2] as unknown as { spec: { ports: { targetPort: string }[] } }
    expect(service.spec.ports.map((p) => p.targetPort)).toEqual(['http'])
  })
})

describe('deploy/systemd/verdict.service', () => {
  it('runs the server `npm start` runs, as its own user, with a stop timeout past the drain', () => {
    const unit = read('deploy/systemd/verdict.service')
    const exec = /^ExecStart=\/usr\/bin\/node (.+)$/m.exec(unit)?.[1]
    expect(startScript.endsWith(`node ${exec}`)).toBe(true)
    expect(unit).toMatch(/^User=verdict$/m)
    expect(Number(/^TimeoutStopSec=(\d+)$/m.exec(unit)?.[1]) * 1000).toBeGreaterThan(10_000)
  })
})
