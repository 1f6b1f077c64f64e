import { parseArgs } from 'node:util'

export interface BenchOptions {
  /** autocannon duration of each load run, seconds. */
  seconds: number
  /** Also measure the server on PostgreSQL. */
  pg: boolean
  /** Measure PostgreSQL only: no SQLite block, no reference-data figures (implies pg). */
  pgOnly: boolean
  /** PostgreSQL server the `--pg` runs use; each run gets its own schema there. */
  pgUrl: string
  /** Measure score throughput again after recording a large history. */
  history: boolean
  historyEvents: number
  historyPeople: number
  /** Two nodes on PostgreSQL sharing limits through Redis, against one node. */
  nodes: boolean
  /** Redis the `--nodes` runs use (a key prefix of their own). */
  redisUrl: string
  /** Poisson arrivals per second, and the length of that run. */
  rate: number
  poissonSeconds: number
  /** Where `--profile` writes CPU profiles; null without the flag. */
  profileDir: string | null
}

const USAGE = `usage: npm run bench -- [--seconds N] [--pg] [--history] [--history-events N] [--history-people N]

  --seconds N           autocannon duration of each load run (default 8)
  --pg                  also measure score and batch figures on PostgreSQL
                        (VERDICT_BENCH_PG, default postgres://postgres@127.0.0.1:5432/test; a fresh
                        schema per run, dropped afterwards)
  --pg-only             only the PostgreSQL block (implies --pg): no SQLite figures and no
                        reference-data figures, for A/B runs of the PostgreSQL path
  --history             per engine: score throughput on a young database, then again after recording
                        a large population through POST /v1/batch/score
  --history-events N    events recorded by --history (default 1000000)
  --history-people N    people they belong to (default 50000)
  --nodes               PostgreSQL with limits in Redis (VERDICT_BENCH_REDIS, default
                        redis://127.0.0.1:6379/0): the shared limit check's cost, then two nodes
                        against one
  --rate N              Poisson arrivals per second for the open-loop latency run (default 200)
  --poisson-seconds N   length of that run (default 20)
  --profile             one more saturation run per engine with a V8 CPU profile and a
                        per-statement timing table
  --profile-dir DIR     where the profiles go (default bench-profiles/; implies --profile)
`

function positiveInt(name: string, value: string | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1 || n > max) throw new Error(`--${name} takes a whole number 1..${max}`)
  return n
}

/** Reads the command line; prints usage and exits on --help or a bad flag. */
export function benchOptions(argv: string[], env: NodeJS.ProcessEnv): BenchOptions {
  try {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        seconds: { type: 'string' },
        pg: { type: 'boolean', default: false },
        'pg-only': { type: 'boolean', default: false },
        history: { type: 'boolean', default: false },
        'history-events': { type: 'string' },
        'history-people': { type: 'string' },
        nodes: { type: 'boolean', default: false },
        rate: { type: 'string' },
        'poisson-seconds': { type: 'string' },
        profile: { type: 'boolean', default: false },
        'profile-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    })
    if (values.help) {
      process.stdout.write(USAGE)
      process.exit(0)
    }
    return {
      seconds: positiveInt('seconds', values.seconds, 8, 600),
      pg: values.pg || values['pg-only'],
      pgOnly: values['pg-only'],
      pgUrl: env['VERDICT_BENCH_PG']?.trim() || 'postgres://postgres@127.0.0.1:5432/test',
      history: values.history,
      historyEvents: positiveInt('history-events', values['history-events'], 1_000_000, 20_000_000),
      historyPeople: positiveInt('history-people', values['history-people'], 50_000, 5_000_000),
      nodes: values.nodes,
      redisUrl: env['VERDICT_BENCH_REDIS']?.trim() || 'redis://127.0.0.1:6379/0',
      rate: positiveInt('rate', values.rate, 200, 100_000),
      poissonSeconds: positiveInt('poisson-seconds', values['poisson-seconds'], 20, 600),
      profileDir:
        values.profile || values['profile-dir'] ? (values['profile-dir'] ?? 'bench-profiles') : null,
    }
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}`)
    process.exit(2)
  }
}
