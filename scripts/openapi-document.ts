// Prints the OpenAPI document the server serves at GET /v1/openapi.json, without a server or a database
// of the operator's: the app is built over a throwaway SQLite file and asked once. Used by
// `npm run lint:openapi` and by `npm run generate` in clients/typescript (compiled to dist/scripts/).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { loadIntel } from '../src/intel/index.js'
import { openStore } from '../src/store/index.js'
import { systemClock } from '../src/util/clock.js'
import { Hasher } from '../src/util/secrets.js'

const dir = mkdtempSync(join(tmpdir(), 'verdict-openapi-'))
try {
  const store = await openStore({ kind: 'sqlite', file: join(dir, 'verdict.db') })
  const intel = await loadIntel({ feedsDir: join(dir, 'feeds'), city: false })
  const app = await buildApp({ store, clock: systemClock, hasher: new Hasher('x'.repeat(32)), intel })
  await app.ready()
  // What GET /v1/openapi.json answers (src/routes/openapi.ts).
  const doc = app.swagger()
  await app.close()
  await store.close()
  const text = `${JSON.stringify(doc, null, 2)}\n`
  const out = process.argv[2]
  if (out) writeFileSync(out, text)
  else process.stdout.write(text)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
