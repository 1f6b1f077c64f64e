/**
 * `npm run bench`: loopback load with autocannon (50 connections) against the real server and, in the
 * same run, against a bare Fastify echo server as the reference. Prints figures; asserts nothing.
 */
import type autocannon from 'autocannon'
import { benchAi } from './ai.js'
import { benchEmailIntel } from './email-intel.js'
import { type Figures, load, row, startBenchServer } from './http.js'
import { benchIpIntel } from './ip-intel.js'
import { benchPhoneIntel } from './phone-intel.js'
import { scoreBodies } from './score-mix.js'
import { benchStartup } from './startup.js'

async function intelFigures(): Promise<void> {
  console.log('\nreference data, in process')
  const email = await benchEmailIntel()
  console.log(
    `  email analysis   ${String(email.checksPerSec).padStart(9)} checks/s   (load ${Math.round(email.loadMs)} ms)`,
  )
  const ip = await benchIpIntel()
  console.log(
    `  IP lookup        ${String(ip.lookupsPerSec).padStart(9)} lookups/s  (load ${Math.round(ip.loadMs)} ms)`,
  )
  const phone = await benchPhoneIntel()
  console.log(
    `  phone analysis   ${String(phone.checksPerSec).padStart(9)} checks/s   (load ${Math.round(phone.loadMs)} ms)`,
  )
  const ai = await benchAi()
  console.log(
    `  AI explanation   cache miss +${ai.missMs.toFixed(2)} ms (loopback provider), cache hit +${ai.hitMs.toFixed(3)} ms`,
  )
  const start = await benchStartup()
  console.log(
    `  server start     ${start.startMs} ms to listening, RSS ${start.rssMb} MB with all data loaded`,
  )
}

function cycling(
  bodies: Record<string, unknown>[],
  path: string,
  headers: Record<string, string>,
): autocannon.Request[] {
  let i = 0
  return [
    {
      method: 'POST' as const,
      path,
      headers: { 'content-type': 'application/json', ...headers },
      setupRequest: (req: autocannon.Request) => ({
        ...req,
        body: JSON.stringify(bodies[i++ % bodies.length]),
      }),
    },
  ]
}

async function scoreFigures(echoPort: number, port: number, apiKey: string): Promise<void> {
  const bodies = scoreBodies(20_000)
  const ref: Figures = await load({
    url: `http://127.0.0.1:${echoPort}`,
    requests: cycling(bodies, '/echo-score', {}),
  })
  console.log(row('reference: Fastify validated echo', ref))
  const s: Figures = await load({
    url: `http://127.0.0.1:${port}`,
    requests: cycling(bodies, '/v1/score', { 'x-api-key': apiKey }),
  })
  console.log(row('verdict: POST /v1/score (mixed)', s))
  console.log(
    `ratio POST /v1/score / reference: ${(s.reqPerSec / ref.reqPerSec).toFixed(2)}   (targets: ratio >= 0.35, p99 <= 20 ms)`,
  )
  const rows = scoreBodies(1000)
  const times: number[] = []
  for (let run = 0; run < 5; run++) {
    const t0 = performance.now()
    const res = await fetch(`http://127.0.0.1:${port}/v1/batch/score`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ rows }),
    })
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`batch answered ${res.status}`)
    times.push(performance.now() - t0)
  }
  times.sort((a, b) => a - b)
  console.log(
    `1000-row POST /v1/batch/score: median ${Math.round(times[2]!)} ms, best ${Math.round(times[0]!)} ms (target <= 150 ms)`,
  )
}

async function main(): Promise<void> {
  const echo = await startBenchServer('echo')
  const verdict = await startBenchServer('verdict')
  try {
    const base = `http://127.0.0.1:${verdict.port}`
    console.log('verdict benchmark (loopback, autocannon, 50 connections, 8 s per run)\n')
    const ref = await load({ url: `http://127.0.0.1:${echo.port}/echo` })
    console.log(row('reference: bare Fastify GET echo', ref))
    const config = await load({ url: `${base}/v1/config`, headers: { 'x-api-key': verdict.apiKey } })
    console.log(row('verdict: GET /v1/config', config))
    console.log(`ratio GET /v1/config / reference: ${(config.reqPerSec / ref.reqPerSec).toFixed(2)}\n`)
    await scoreFigures(echo.port, verdict.port, verdict.apiKey)
  } finally {
    echo.stop()
    verdict.stop()
  }
  await intelFigures()
}

await main()
