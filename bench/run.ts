/**
 * `npm run bench`: loopback load with autocannon (50 connections) against the real server and, in the
 * same run, against a bare Fastify echo server as the reference. Prints figures; asserts nothing.
 */
import { load, row, startBenchServer } from './http.js'

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
    console.log(`\nratio GET /v1/config / reference: ${(config.reqPerSec / ref.reqPerSec).toFixed(2)}`)
  } finally {
    echo.stop()
    verdict.stop()
  }
}

await main()
