/**
 * `npm run bench`: loopback load with autocannon (50 connections) against the real server and, in the
 * same run, against a bare Fastify echo server as the reference. Prints figures; asserts nothing.
 */
import { benchEmailIntel } from './email-intel.js'
import { load, row, startBenchServer } from './http.js'
import { benchIpIntel } from './ip-intel.js'
import { benchPhoneIntel } from './phone-intel.js'
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
  const start = await benchStartup()
  console.log(
    `  server start     ${start.startMs} ms to listening, RSS ${start.rssMb} MB with all data loaded`,
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
    console.log(`\nratio GET /v1/config / reference: ${(config.reqPerSec / ref.reqPerSec).toFixed(2)}`)
  } finally {
    echo.stop()
    verdict.stop()
  }
  await intelFigures()
}

await main()
