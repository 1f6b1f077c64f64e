import { afterEach, describe, expect, it } from 'vitest'
import { build, type Engine, type Harness, type TestTenant } from '../helpers/build.js'
import { pgAvailable } from '../helpers/pg.js'
import { enforcedRule as rule } from '../helpers/rules.js'

const hasPg = await pgAvailable()

/** Values that must never rest raw outside the tenant's own config (the rules it wrote). */
const STOLEN = 'StolenCard-5500-0042'
const LISTED = 'ListedCard-4000-0077'
const ADDRESS = 'Drop Address 9 Elm'

/** Every column of every table but the config's, as text (test/api/privacy-at-rest.test.ts reads all). */
async function eventTables(h: Harness, engine: Engine): Promise<string> {
  const config = new Set(['tenant_config', 'config_versions', 'tenant_rules'])
  const tables = (
    await h.store.db.all<{ t: string }>(
      engine === 'sqlite'
        ? "SELECT name AS t FROM sqlite_master WHERE type = 'table'"
        : "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
    )
  ).map((r) => r.t)
  const parts: string[] = []
  for (const t of tables.filter((x) => !config.has(x)))
    parts.push(
      JSON.stringify(await h.store.db.all(`SELECT * FROM "${t}"`), (_k, v) =>
        typeof v === 'bigint' ? String(v) : v,
      ),
    )
  return parts.join('\n')
}

describe.each<Engine>(['sqlite', 'postgres'])(
  'hashed attributes against strings and lists on %s',
  (engine) => {
    let h: Harness
    let t: TestTenant
    const run = it.skipIf(engine === 'postgres' && !hasPg)
    afterEach(async () => {
      await h?.close()
    })
    const setup = async () => {
      h = await build({ engine })
      t = await h.tenant()
      const declared = await api('PUT', '/v1/config', {
        attributes: { card_fp: { hashed: true }, addresses: { hashed: true } },
      })
      expect(declared.statusCode, declared.body).toBe(200)
    }
    const api = (method: 'GET' | 'PUT' | 'POST', url: string, payload?: object) =>
      h.app.inject({ method, url, headers: t.headers, ...(payload ? { payload } : {}) })
    const score = async (attributes: object, event = 'checkout') => {
      const r = await api('POST', '/v1/score', { event, user_id: 'u1', attributes })
      expect(r.statusCode, r.body).toBe(200)
      return r.json()
    }

    run('accepts equality and membership with strings, refuses the rest with rule and position', async () => {
      await setup()
      const accepted = [
        `event.attributes.card_fp == '${STOLEN}'`,
        `'${STOLEN}' == event.attributes.card_fp`,
        `event.attributes.card_fp != '${STOLEN}'`,
        `event.attributes.card_fp in ['${STOLEN}', "other", r'raw\\n']`,
        `'${ADDRESS}' in event.attributes.addresses`,
        `event.attributes.card_fp in event.attributes.addresses`,
        `'stolen' in lists.attributes.card_fp || 'stolen' in lists.attributes['addresses']`,
        'has(event.attributes.card_fp)',
      ]
      for (const when of accepted) {
        const r = await api('PUT', '/v1/config', { rules: [rule('r', when)] })
        expect(r.statusCode, `${when}: ${r.body}`).toBe(200)
      }
      const hashedProblem = (path: string, why: string, at: number) =>
        `rules[0] (r): ${path} is hashed: ${why} at position ${at}`
      const ONLY = 'compare it only with ==, != or in, or test it with has()'
      const LITERAL =
        'its value is a keyed hash: compare it with a string (hashed when the rule is saved) or another value, not this literal'
      const refused: [string, string][] = [
        ["event.attributes.card_fp > 'a'", hashedProblem('event.attributes.card_fp', ONLY, 0)],
        ["'a' <= event.attributes.card_fp", hashedProblem('event.attributes.card_fp', ONLY, 7)],
        ["event.attributes.card_fp.startsWith('4')", hashedProblem('event.attributes.card_fp', ONLY, 0)],
        ["event.attributes.card_fp + 'x' == 'y'", hashedProblem('event.attributes.card_fp', ONLY, 0)],
        ['size(event.attributes.addresses) > 1', hashedProblem('event.attributes.addresses', ONLY, 5)],
        [
          "event.attributes.addresses.exists(a, a == 'x')",
          hashedProblem('event.attributes.addresses', ONLY, 0),
        ],
        ['event.attributes.card_fp == 4111', hashedProblem('event.attributes.card_fp', LITERAL, 28)],
        ['event.attributes.card_fp != true', hashedProblem('event.attributes.card_fp', LITERAL, 28)],
        ['event.attributes.card_fp in [1, 2]', hashedProblem('event.attributes.card_fp', LITERAL, 29)],
        ["event.attributes.card_fp in {'a': 1}", hashedProblem('event.attributes.card_fp', LITERAL, 28)],
        ['1 in event.attributes.addresses', hashedProblem('event.attributes.addresses', LITERAL, 0)],
        [
          "'bins' in lists.attributes.card_bin",
          'rules[0] (r): lists.attributes.card_bin: only hashed attributes are looked up in lists, and card_bin is not declared hashed at position 10',
        ],
      ]
      for (const [when, problem] of refused) {
        const r = await api('PUT', '/v1/config', { rules: [rule('r', when)] })
        expect(r.statusCode, when).toBe(400)
        expect(r.json().error, when).toBe(problem)
      }
    })

    run(
      'a string compared with a hashed attribute is hashed when the rule is saved, so the rule fires',
      async () => {
        await setup()
        const saved = await api('PUT', '/v1/config', {
          rules: [
            rule('stolen_card', `event.attributes.card_fp == '${STOLEN}'`, { verdict: 'block' }),
            rule('watched', `event.attributes.card_fp in ['x', '${STOLEN}'] && event.name == 'checkout'`),
            rule('drop_address', `'${ADDRESS}' in event.attributes.addresses`, { verdict: 'review' }),
            rule('other_card', `event.attributes.card_fp != '${STOLEN}'`, { score: 1 }),
          ],
        })
        expect(saved.statusCode, saved.body).toBe(200)
        // The config keeps the rules as written: the tenant reads and edits them as it wrote them.
        expect(JSON.stringify((await api('GET', '/v1/config')).json())).toContain(STOLEN)
        const hit = await score({ card_fp: STOLEN, addresses: ['Home 1', ADDRESS] })
        expect(hit.reasons).toEqual(['rule:stolen_card', 'rule:watched', 'rule:drop_address'])
        expect(hit.verdict).toBe('block')
        // The evidence is the event's hash, never the value.
        expect(hit.checks[0].evidence['event.attributes.card_fp']).toMatch(/^[0-9a-f]{64}$/)
        const miss = await score({ card_fp: 'Another-Card', addresses: ['Home 1'] })
        expect(miss.reasons).toEqual(['rule:other_card'])
        // Replay compiles the version's rules with the same hash and decides both again identically.
        for (const id of [hit.event_id, miss.event_id])
          expect((await api('POST', '/v1/replay', { event_id: id })).json().identical).toBe(true)
        // What-if with a proposed rule comparing another string reports it firing on the recorded hash.
        const sim = await api('POST', '/v1/config/simulate', {
          rules: [rule('proposed', `event.attributes.card_fp == 'Another-Card'`)],
        })
        expect(sim.statusCode, sim.body).toBe(200)
        expect(JSON.stringify(sim.json())).toMatch(/"proposed"/)
        const dump = await eventTables(h, engine)
        expect(dump).toContain(hit.event_id)
        for (const raw of [STOLEN, ADDRESS, 'Another-Card']) expect(dump, raw).not.toContain(raw)
      },
    )

    run(
      'an attribute list entry is stored as the keyed hash and matches the hashed value in rules',
      async () => {
        await setup()
        await api('PUT', '/v1/config', {
          rules: [
            rule('listed_card', "'stolen_cards' in lists.attributes.card_fp", { verdict: 'block' }),
            rule('listed_address', "'drops' in lists.attributes.addresses"),
          ],
        })
        const added = await api('POST', '/v1/lists', {
          list: 'stolen_cards',
          type: 'attribute',
          value: LISTED,
        })
        expect(added.statusCode, added.body).toBe(200)
        expect(added.json().hint).toMatch(/^[0-9a-f]{64}$/)
        const drop = await api('POST', '/v1/lists', { list: 'drops', type: 'attribute', value: ADDRESS })
        expect(drop.statusCode).toBe(200)
        // Allow and block take identifiers only.
        const onBlock = await api('POST', '/v1/lists', { list: 'block', type: 'attribute', value: LISTED })
        expect(onBlock.statusCode).toBe(400)
        expect(onBlock.json().error).toMatch(/^body\.list: attribute values go on a list of your own/)
        const hit = await score({ card_fp: LISTED, addresses: ['Home 1', ADDRESS] })
        expect(hit.reasons).toEqual(['rule:listed_card', 'rule:listed_address'])
        expect(hit.checks[0].evidence).toEqual({ 'lists.attributes.card_fp': ['stolen_cards'] })
        // The hash of the evidence's attribute is the listed entry's.
        const listed = (await api('GET', '/v1/lists?list=stolen_cards&type=attribute')).json().entries
        expect(listed.map((e: { hint: string }) => e.hint)).toEqual([added.json().hint])
        // Not listed, or without the attribute: the rule does not hold.
        expect((await score({ card_fp: 'Clean-Card' })).reasons).toEqual([])
        expect((await score({ addresses: ['Home 1'] })).reasons).toEqual([])
        expect((await api('POST', '/v1/replay', { event_id: hit.event_id })).json().identical).toBe(true)
        const dump = await eventTables(h, engine)
        expect(dump).toContain('stolen_cards')
        for (const raw of [LISTED, ADDRESS]) expect(dump, raw).not.toContain(raw)
      },
    )
  },
)
