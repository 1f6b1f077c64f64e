import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLIENTS, installed, type Ja4Measurement, measure } from '../../scripts/measure-ja4.mjs'
import { JA4_PATTERN } from '../../src/tls/ja4.js'
import { KNOWN_TOOLS, knownTool } from '../../src/tls/known-tools.js'
import { browserAvailable } from '../helpers/browser.js'
import { startTlsApp, type TlsApp, testCertificate } from './tls-app.js'

/**
 * The known-tool table against the clients of this machine, through the real TLS termination: the
 * same measurement as scripts/measure-ja4.mjs. curl and Node's fetch must be recognised; the other
 * tools are checked when installed; headless Chromium must be captured and must not be recognised.
 */
const REQUIRED = ['curl', 'node-fetch']
const RE_MEASURE =
  'src/tls/known-tools.ts is out of date for this machine: re-measure with node scripts/measure-ja4.mjs'

let cert: Awaited<ReturnType<typeof testCertificate>>
let server: TlsApp
let results: Ja4Measurement[]

beforeAll(async () => {
  cert = await testCertificate()
  server = await startTlsApp(cert.credentials)
  const withBrowser = browserAvailable()
  const clients = CLIENTS.filter((c) => !c.browser || withBrowser)
  results = await measure(server.port, cert.certFile, clients)
  // The figures, for the table's comment and the docs.
  for (const r of results) console.log(JSON.stringify(r))
}, 180_000)

afterAll(async () => {
  await server?.close()
  cert?.remove()
})

const of = (client: string) => results.filter((r) => r.client === client && !r.skipped)

describe('known-tool JA4s, measured against the HTTPS listener', () => {
  it('gives one client the same JA4 on every new connection', () => {
    for (const r of results.filter((x) => !x.skipped)) {
      expect(r.fresh?.[0], `${r.client} ${r.host}`).toMatch(JA4_PATTERN)
      expect(r.fresh?.[1], `${r.client} ${r.host}: second connection`).toBe(r.fresh?.[0])
    }
  })

  it('recognises curl and Node fetch (so ja4_known_tool is set)', async () => {
    for (const name of REQUIRED) {
      const client = CLIENTS.find((c) => c.name === name)!
      expect(await installed(client), `${name} must be installed for this test`).not.toBeNull()
      expect(of(name)).toHaveLength(2)
      for (const r of of(name)) {
        expect(knownTool(r.fresh![0]), `${name} ${r.host} ${r.fresh![0]}: ${RE_MEASURE}`).toBe(name)
        if (r.resumed !== undefined) expect(knownTool(r.resumed), `${name} resumed: ${RE_MEASURE}`).toBe(name)
      }
    }
  })

  it('recognises the other installed tools by their own name', () => {
    for (const r of results.filter(
      (x) => !x.skipped && !REQUIRED.includes(x.client) && x.client !== 'chromium',
    )) {
      expect(knownTool(r.fresh![0]), `${r.client} ${r.host} ${r.fresh![0]}: ${RE_MEASURE}`).toBe(r.client)
      if (r.resumed !== undefined)
        expect(knownTool(r.resumed), `${r.client} resumed: ${RE_MEASURE}`).toBe(r.client)
    }
  })

  it.skipIf(!browserAvailable())('captures headless Chromium, which is not a known tool', () => {
    const chromium = of('chromium')
    expect(chromium).toHaveLength(2)
    for (const r of chromium) {
      expect(r.fresh![0]).toMatch(/^t13[di]\d{4}h2_/)
      expect(KNOWN_TOOLS.has(r.fresh![0]), `chromium ${r.fresh![0]}`).toBe(false)
      expect(knownTool(r.fresh![0])).toBeNull()
    }
  })

  it('holds only well-formed JA4s and answers null for nothing', () => {
    for (const ja4 of KNOWN_TOOLS.keys()) expect(ja4).toMatch(JA4_PATTERN)
    expect(knownTool(null)).toBeNull()
    expect(knownTool(undefined)).toBeNull()
    expect(knownTool('t13d1516h2_8daaf6152771_e5627efa2ab1')).toBeNull()
  })
})
