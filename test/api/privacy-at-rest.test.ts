import { afterEach, describe, expect, it } from 'vitest'
import { build, type Engine, type Harness } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'
import { storeBytes } from '../helpers/store-bytes.js'

const hasPg = await pgAvailable()

// Every raw form the requests below send: the written spellings and the canonical ones.
const EMAIL = 'Distinct.Person+x@gmail.com'
const PHONE = '+44 20 7946 0321'
const IP = '73.162.10.20'
/** A hashed attribute's value (a card fingerprint): only its keyed hash may rest (docs/rules.md). */
const CARD = 'CardRaw-4111-77'
/** A card on the tenant's own list of attribute values: stored as its keyed hash only. */
const LISTED_CARD = 'ListedRaw-5500-31'
/**
 * A card a rule compares the hashed attribute with: hashed when the rule is compiled. The config keeps
 * the rule as the tenant wrote it (docs/rules.md), so the string rests in the config tables only.
 */
const RULE_CARD = 'RuleRaw-3400-19'
const CONFIG_TABLES = ['tenant_config', 'tenant_rules', 'config_versions']
const RAW = [
  CARD,
  LISTED_CARD,
  '73.162.10.16',
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

/**
 * Every route that stores something derived from an identifier, each given the raw values; the
 * writes go under Idempotency-Keys, so their stored responses are scanned too. Returns the device
 * token the service handed out (a bearer value that must not rest in clear either).
 */
async function sendEverywhere(h: Harness): Promise<{ token: string }> {
  const t = await h.tenant({ shareNetwork: true })
  const declared = await h.app.inject({
    method: 'PUT',
    url: '/v1/config',
    headers: t.headers,
    payload: {
      attributes: { card_fp: { hashed: true, counted: true } },
      rules: [
        {
          id: 'shared_card',
          when: 'has(event.attributes.card_fp) && counts.card_fp.accounts_24h >= 1',
          then: { score: 1 },
          mode: 'enforce',
          rollout: 100,
        },
        {
          id: 'rule_card',
          when: `event.attributes.card_fp == '${RULE_CARD}'`,
          then: { score: 1 },
          mode: 'enforce',
          rollout: 100,
        },
        {
          id: 'listed_card',
          when: "'stolen' in lists.attributes.card_fp",
          then: { score: 1 },
          mode: 'enforce',
          rollout: 100,
        },
      ],
    },
  })
  expect(declared.statusCode, declared.body).toBe(200)
  const post = (url: string, payload: object, key?: string) =>
    h.app.inject({
      method: 'POST',
      url,
      headers: { ...t.headers, ...(key ? { 'idempotency-key': key } : {}) },
      payload,
    })
  const person = {
    event: 'signup',
    email: EMAIL,
    ip: IP,
    phone: PHONE,
    user_id: 'u',
    device_id: 'fp-at-rest',
    attributes: { card_fp: CARD, plan: 'pro' },
  }
  const scored = await post('/v1/score', person, 'at-rest-1')
  expect(scored.statusCode).toBe(200)
  expect(scored.json().identity.email_canonical).toBe('distinctperson@gmail.com')
  // The hashed attribute reached the rule (as its hash) and was counted.
  expect(scored.json().reasons).toContain('rule:shared_card')
  const token = scored.json().device_token as string
  expect(token).toBeTruthy()
  // The replay gives back the same response, identifiers included.
  const again = await post('/v1/score', person, 'at-rest-1')
  expect(again.headers['idempotent-replayed']).toBe('true')
  expect(again.json()).toEqual(scored.json())
  const v6 = await post(
    '/v1/score',
    { event: 'login', ip: '2001:db8:77:1::5', device_id: 'fp-at-rest', device_token: token },
    'at-rest-2',
  )
  expect(v6.statusCode).toBe(200)
  const batch = await post('/v1/batch/score', { rows: [{ ...person, event: 'login' }] }, 'at-rest-3')
  expect(batch.statusCode, batch.body).toBe(200)
  // A card a rule names and a card on an attribute list: both reach their rules as hashes.
  expect(
    (await post('/v1/lists', { list: 'stolen', type: 'attribute', value: LISTED_CARD })).statusCode,
  ).toBe(200)
  for (const [card, code, key] of [
    [RULE_CARD, 'rule:rule_card', 'at-rest-4'],
    [LISTED_CARD, 'rule:listed_card', 'at-rest-5'],
  ] as const) {
    const hit = await post('/v1/score', { ...person, attributes: { card_fp: card } }, key)
    expect(hit.json().reasons, card).toContain(code)
  }
  for (const [url, body] of [
    ['/v1/check/email', { email: EMAIL }],
    ['/v1/check/ip', { ip: IP }],
    ['/v1/check/phone', { phone: PHONE }],
    ['/v1/lists', { list: 'block', type: 'email', value: EMAIL }],
    ['/v1/lists', { list: 'block', type: 'ip', value: IP }],
    ['/v1/lists', { list: 'block', type: 'ip', value: '73.162.10.16/28' }],
    ['/v1/lists', { list: 'block', type: 'phone', value: PHONE }],
    ['/v1/label', { label: 'fraud', event_id: scored.json().event_id }],
    ['/v1/label', { label: 'fraud', entities: { email: EMAIL, ip: IP } }],
    ['/v1/subject', { email: EMAIL, phone: PHONE, ip: IP }],
  ] as const) {
    const res = await post(
      url,
      body,
      url === '/v1/label' ? `label-${JSON.stringify(body).length}` : undefined,
    )
    expect(res.statusCode, `${url} ${res.body}`).toBeLessThan(300)
  }
  return { token }
}

/**
 * Every column of every table of the store, enumerated from the catalogue (sqlite_master and
 * pragma_table_info, or information_schema), each read as text on its own.
 */
async function dumpTables(
  h: Harness,
  engine: Engine,
): Promise<{ tables: string[]; columns: string[]; dump: string }> {
  const cols =
    engine === 'sqlite'
      ? await h.store.db.all<{ t: string; c: string }>(
          `SELECT m.name AS t, p.name AS c FROM sqlite_master m, pragma_table_info(m.name) p
            WHERE m.type = 'table' ORDER BY 1, 2`,
        )
      : await h.store.db.all<{ t: string; c: string }>(
          `SELECT c.table_name AS t, c.column_name AS c FROM information_schema.columns c
             JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
            WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' ORDER BY 1, 2`,
        )
  const parts: string[] = []
  for (const { t, c } of cols) {
    const rows = await h.store.db.all<{ v: unknown }>(
      `SELECT ${engine === 'sqlite' ? `"${c}"` : `"${c}"::text`} AS v FROM "${t}"`,
    )
    parts.push(
      `${t}.${c}=${JSON.stringify(rows.map((r) => (Buffer.isBuffer(r.v) ? r.v.toString('latin1') : r.v)))}`,
    )
  }
  return {
    tables: [...new Set(cols.map((x) => x.t))],
    columns: cols.map((x) => `${x.t}.${x.c}`),
    dump: parts.join('\n').toLowerCase(),
  }
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
      const { token } = await sendEverywhere(h)
      const { tables, columns, dump } = await dumpTables(h, engine)
      expect(tables).toEqual(
        expect.arrayContaining(['events', 'lookups', 'list_entries', 'device_links', 'idempotency_keys']),
      )
      expect(columns).toContain('idempotency_keys.body')
      // The stored responses are there (one per key), so the scan below does read them.
      const kept = await h.store.db.all<{ body: string }>('SELECT body FROM idempotency_keys')
      expect(kept.length).toBeGreaterThanOrEqual(4)
      for (const raw of [...RAW, token]) expect(dump, raw).not.toContain(raw.toLowerCase())
      // The string a rule compares a hashed attribute with is in the rule as written, nowhere else.
      const outside = dump
        .split('\n')
        .filter((line) => !CONFIG_TABLES.some((t) => line.startsWith(`${t}.`)))
        .join('\n')
      expect(outside).not.toContain(RULE_CARD.toLowerCase())
      expect(dump).toContain(RULE_CARD.toLowerCase())
      // The coarse forms that are meant to be kept are there, so the dump is not empty of them.
      expect(dump).toContain('gmail.com')
      expect(dump).toContain('73.162.10.0/24')
      const all = await storeBytes(h, engine)
      expect(all.includes(Buffer.from('73.162.10.0/24'))).toBe(true)
      for (const raw of [...RAW, token]) {
        for (const form of new Set([raw, raw.toLowerCase(), raw.toUpperCase()])) {
          expect(all.includes(Buffer.from(form)), form).toBe(false)
        }
      }
    },
    // Reads every relation file of the schema: ~15 s on PostgreSQL when the machine is busy.
    120_000,
  )
})

describe.each(['sqlite', 'postgres'] as const)('idempotent responses and erasure on %s', (engine) => {
  let h: Harness | undefined
  afterEach(async () => {
    await h?.close()
    h = undefined
  })

  it.skipIf(engine === 'postgres' && !hasPg)(
    "/v1/subject lists the stored responses of the subject's events and /v1/forget deletes them",
    async () => {
      h = await build({ engine })
      const t = await h.tenant()
      const post = (url: string, payload: object, key?: string) =>
        h!.app.inject({
          method: 'POST',
          url,
          headers: { ...t.headers, ...(key ? { 'idempotency-key': key } : {}) },
          payload,
        })
      const mine = (
        await post('/v1/score', { event: 'signup', email: EMAIL, user_id: 'me' }, 'k-mine')
      ).json()
      const batch = await post(
        '/v1/batch/score',
        {
          rows: [
            { event: 'login', email: EMAIL },
            { event: 'login', user_id: 'other' },
          ],
        },
        'k-batch',
      )
      expect(batch.statusCode, batch.body).toBe(200)
      await post('/v1/score', { event: 'signup', user_id: 'bystander' }, 'k-other')
      const rows = async () =>
        Number((await h!.store.db.get<{ n: number }>('SELECT count(*) AS n FROM idempotency_keys'))?.n)
      expect(await rows()).toBe(3)
      const subject = (await post('/v1/subject', { email: EMAIL })).json()
      expect(subject.counts.idempotent_responses).toBe(2)
      expect(subject.idempotent_responses.map((r: { eventId: string }) => r.eventId)).toContain(mine.event_id)
      const forget = (await post('/v1/forget', { email: EMAIL })).json()
      expect(forget.deleted.idempotent_responses).toBe(2)
      expect(await rows()).toBe(1)
      // The erased person's retry is not answered from a stored copy any more.
      const retry = await post('/v1/score', { event: 'signup', email: EMAIL, user_id: 'me' }, 'k-mine')
      expect(retry.headers['idempotent-replayed']).toBeUndefined()
      // The bystander's key still replays.
      const other = await post('/v1/score', { event: 'signup', user_id: 'bystander' }, 'k-other')
      expect(other.headers['idempotent-replayed']).toBe('true')
    },
  )
})
