import { afterEach, describe, expect, it } from 'vitest'
import { build, type Engine, type Harness } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'
import { storeBytes } from '../helpers/store-bytes.js'

const hasPg = await pgAvailable()

// Every raw form the requests below send: the written spellings and the canonical ones.
const EMAIL = 'Distinct.Person+x@gmail.com'
const PHONE = '+44 20 7946 0321'
const IP = '73.162.10.20'
const RAW = [
  'distinct.person',
  'distinctperson',
  IP,
  '+442079460321',
  '2079460321',
  '79460321',
  '7946 0321',
  '020 7946',
  '2001:db8:77:1::5',
  '2001:0db8',
]

/** Every route that stores something derived from an identifier, each given the raw values. */
async function sendEverywhere(h: Harness) {
  const t = await h.tenant({ shareNetwork: true })
  const post = (url: string, payload: object) =>
    h.app.inject({ method: 'POST', url, headers: t.headers, payload })
  const scored = await post('/v1/score', {
    event: 'signup',
    email: EMAIL,
    ip: IP,
    phone: PHONE,
    user_id: 'u',
  })
  expect(scored.statusCode).toBe(200)
  const v6 = await post('/v1/score', { event: 'login', ip: '2001:db8:77:1::5', device_id: 'fp-at-rest' })
  expect(v6.statusCode).toBe(200)
  for (const [url, body] of [
    ['/v1/check/email', { email: EMAIL }],
    ['/v1/check/ip', { ip: IP }],
    ['/v1/check/phone', { phone: PHONE }],
    ['/v1/lists', { list: 'block', type: 'email', value: EMAIL }],
    ['/v1/lists', { list: 'block', type: 'ip', value: IP }],
    ['/v1/label', { label: 'fraud', event_id: scored.json().event_id }],
    ['/v1/label', { label: 'fraud', entities: { email: EMAIL, ip: IP } }],
    ['/v1/subject', { email: EMAIL, phone: PHONE, ip: IP }],
  ] as const) {
    const res = await post(url, body)
    expect(res.statusCode, `${url} ${res.body}`).toBeLessThan(300)
  }
}

/** All tables of the store, each dumped whole. */
async function dumpTables(h: Harness, engine: Engine): Promise<{ tables: string[]; dump: string }> {
  const tables = (
    engine === 'sqlite'
      ? await h.store.db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
      : await h.store.db.all<{ name: string }>(
          `SELECT table_name AS name FROM information_schema.tables
            WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
        )
  ).map((t) => t.name)
  const rows = await Promise.all(tables.map((x) => h.store.db.all(`SELECT * FROM ${x}`)))
  return { tables, dump: JSON.stringify(rows).toLowerCase() }
}

describe.each(['sqlite', 'postgres'] as const)('privacy at rest on %s', (engine) => {
  let h: Harness | undefined
  afterEach(async () => {
    await h?.close()
    h = undefined
  })

  it.skipIf(engine === 'postgres' && !hasPg)(
    'stores no raw email, phone or IP in any table or any file',
    async () => {
      h = await build({ engine })
      await sendEverywhere(h)
      const { tables, dump } = await dumpTables(h, engine)
      expect(tables).toEqual(expect.arrayContaining(['events', 'lookups', 'list_entries', 'device_links']))
      for (const raw of RAW) expect(dump, raw).not.toContain(raw.toLowerCase())
      // The coarse forms that are meant to be kept are there, so the dump is not empty of them.
      expect(dump).toContain('gmail.com')
      expect(dump).toContain('73.162.10.0/24')
      const all = await storeBytes(h, engine)
      expect(all.includes(Buffer.from('73.162.10.0/24'))).toBe(true)
      for (const raw of RAW) {
        for (const form of new Set([raw, raw.toLowerCase(), raw.toUpperCase()])) {
          expect(all.includes(Buffer.from(form)), form).toBe(false)
        }
      }
    },
  )
})
