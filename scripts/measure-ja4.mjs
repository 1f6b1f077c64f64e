// Measures the JA4 TLS fingerprint of the HTTP clients installed on this machine against verdict's own
// TLS termination (src/tls/capture.ts), to fill or re-check src/tls/known-tools.ts.
//
//   node scripts/measure-ja4.mjs          # builds dist/ if needed, prints a JSON line per client and host
//
// Every client fetches https://localhost:PORT/ (SNI sent, as when a real host name is used) and
// https://127.0.0.1:PORT/ (no SNI) twice from a fresh process, so each answer is a first handshake; the
// server answers with the JA4 it captured and closes the connection. The Node clients also make a second
// request from the same process, which resumes the TLS session (a pre_shared_key extension, so another
// JA4). A client that is not installed is skipped. The test test/tls/known-tools.test.ts runs the same
// clients against the same capture and checks the table.
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const CHROMIUM_PATH = '/usr/bin/chromium'
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--ignore-certificate-errors',
]

/** Runs a program; resolves with its stdout, rejects with its stderr. Never blocks the event loop. */
function run(file, args, env = {}) {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env: { ...process.env, ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${file} ${args.join(' ')}: ${stderr || err.message}`))
      else resolve(stdout)
    })
  })
}

const firstLine = (s) => s.split('\n')[0].trim()
const lines = (out) =>
  out
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)

// Node clients print each body on its own line; two requests from one process (the second resumes).
const NODE_FETCH = `
for (let i = 0; i < Number(process.argv[2]); i++)
  console.log(await (await fetch(process.argv[1])).text())`
const NODE_HTTPS = `
import { get } from 'node:https'
const once = () => new Promise((resolve, reject) =>
  get(process.argv[1], (res) => { let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => resolve(b)) }).on('error', reject))
for (let i = 0; i < Number(process.argv[2]); i++) console.log(await once())`
const PYTHON_URLLIB = 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())'
const PYTHON_VERSION = 'import sys, ssl; print("Python", sys.version.split()[0], ssl.OPENSSL_VERSION)'

/**
 * The clients. `fetch(url, caFile, times)` makes `times` requests from one process and resolves with
 * the bodies. Certificates are trusted the way each tool's users do it (a CA file), which does not
 * change what the client sends.
 */
export const CLIENTS = [
  {
    name: 'curl',
    version: async () => firstLine(await run('curl', ['--version'])),
    fetch: async (url, ca) => lines(await run('curl', ['-sS', '--cacert', ca, url])),
  },
  {
    name: 'wget',
    version: async () => firstLine(await run('wget', ['--version'])),
    fetch: async (url, ca) => lines(await run('wget', ['-q', '-O', '-', `--ca-certificate=${ca}`, url])),
  },
  {
    name: 'python-urllib',
    version: async () => firstLine(await run('python3', ['-c', PYTHON_VERSION])),
    // urllib's own default context (a context passed by the caller would drop its ALPN).
    fetch: async (url, ca) => lines(await run('python3', ['-c', PYTHON_URLLIB, url], { SSL_CERT_FILE: ca })),
  },
  {
    name: 'node-fetch',
    version: async () =>
      `Node ${process.versions.node} fetch (undici ${process.versions.undici}), OpenSSL ${process.versions.openssl}`,
    fetch: async (url, ca, times = 1) =>
      lines(
        await run(process.execPath, ['--input-type=module', '-e', NODE_FETCH, url, String(times)], {
          NODE_EXTRA_CA_CERTS: ca,
        }),
      ),
    resumes: true,
  },
  {
    name: 'node-https',
    version: async () => `Node ${process.versions.node} https, OpenSSL ${process.versions.openssl}`,
    fetch: async (url, ca, times = 1) =>
      lines(
        await run(process.execPath, ['--input-type=module', '-e', NODE_HTTPS, url, String(times)], {
          NODE_EXTRA_CA_CERTS: ca,
        }),
      ),
    resumes: true,
  },
  {
    name: 'chromium',
    browser: true,
    version: async () => firstLine(await run(CHROMIUM_PATH, ['--version'])),
    // A fresh browser context per visit: its own connections and no TLS session to resume.
    fetch: async (url) => {
      const { chromium } = await import('playwright-core')
      const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS })
      try {
        const context = await browser.newContext()
        const page = await context.newPage()
        await page.goto(url)
        return [(await page.evaluate(() => document.body.textContent ?? '')).trim()]
      } finally {
        await browser.close()
      }
    },
  },
]

/** Whether a client can run here (its program answers --version). */
export async function installed(client) {
  try {
    return await client.version()
  } catch {
    return null
  }
}

/**
 * Runs every installed client against `port` (the HTTPS listener answering with the JA4 it captured):
 * for each, its version and the JA4 of two first handshakes per host, plus the resumed one where the
 * client resumes sessions. Resolves with one record per client and host.
 */
export async function measure(port, caFile, clients = CLIENTS) {
  const out = []
  for (const client of clients) {
    const version = await installed(client)
    if (version === null) {
      out.push({ client: client.name, skipped: 'not installed' })
      continue
    }
    for (const host of ['localhost', '127.0.0.1']) {
      const url = `https://${host}:${port}/`
      const fresh = [(await client.fetch(url, caFile))[0], (await client.fetch(url, caFile))[0]]
      const record = { client: client.name, version, host, fresh }
      if (client.resumes) record.resumed = (await client.fetch(url, caFile, 2))[1]
      out.push(record)
    }
  }
  return out
}

/** A self-signed certificate for localhost and 127.0.0.1 in `dir` (openssl). */
export async function selfSignedCertificate(dir) {
  const certFile = join(dir, 'cert.pem')
  const keyFile = join(dir, 'key.pem')
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=localhost',
    '-addext',
    'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-keyout',
    keyFile,
    '-out',
    certFile,
  ])
  return { certFile, keyFile }
}

async function main() {
  const root = join(fileURLToPath(import.meta.url), '..', '..')
  await run(process.execPath, [join(root, 'scripts', 'ensure-build.mjs')])
  const { createServer } = await import('node:http')
  const { readTlsCredentials, terminateTls, ja4Of } = await import(
    pathToFileURL(join(root, 'dist', 'src', 'tls', 'capture.js')).href
  )
  const dir = mkdtempSync(join(tmpdir(), 'verdict-ja4-'))
  try {
    const files = await selfSignedCertificate(dir)
    const server = createServer((req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/plain', connection: 'close' })
        .end(ja4Of(req.socket) ?? 'none')
    })
    terminateTls(server, readTlsCredentials(files))
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    const results = await measure(server.address().port, files.certFile)
    for (const r of results) process.stdout.write(`${JSON.stringify(r)}\n`)
    server.closeAllConnections()
    server.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    process.stderr.write(`${err.stack ?? err}\n`)
    process.exit(1)
  })
}
