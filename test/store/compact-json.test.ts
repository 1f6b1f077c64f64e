import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { COMPACT_MARK, jsonText, packJson, SHAPES, unpackJson } from '../../src/store/events/compact-json.js'

const SEED = Number(process.env.FUZZ_SEED ?? 20261123)

/** What storing as plain JSON gives back: the reference the compact form must equal exactly. */
const viaJson = (v: unknown) => JSON.stringify(v)

/** Objects of a known shape (sometimes with a key left undefined, or one more key), in arrays and objects. */
const { any: value } = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.string(),
    fc.constant(undefined),
    fc.constantFrom('~', '[-1]', '{"a":1}', '__proto__'),
  ),
  shaped: fc
    .tuple(
      fc.integer({ min: 0, max: SHAPES.length - 1 }),
      fc.array(tie('any'), { minLength: 12, maxLength: 12 }),
      fc.option(fc.tuple(fc.constantFrom('extra', '__proto__', '7', 'list'), tie('any'))),
    )
    .map(([id, values, extra]) => {
      const o: Record<string, unknown> = {}
      SHAPES[id]!.forEach((k, i) => {
        o[k] = values[i]
      })
      if (extra) Object.defineProperty(o, extra[0], { value: extra[1], enumerable: true, writable: true })
      return o
    }),
  object: fc.dictionary(fc.string(), tie('any'), { maxKeys: 4 }),
  array: fc.array(tie('any'), { maxLength: 4 }),
  any: fc.oneof({ depthSize: 'small' }, tie('leaf'), tie('shaped'), tie('object'), tie('array')),
}))

describe('the compact JSON of event rows', () => {
  it('reads back exactly what plain JSON would, keys in the same order, for any value', () => {
    let shaped = 0
    fc.assert(
      fc.property(value, (v: unknown) => {
        const packed = packJson(v)
        expect(packed.startsWith(COMPACT_MARK)).toBe(true)
        if (v !== undefined) {
          expect(jsonText(packed)).toBe(viaJson(v))
          expect(JSON.stringify(unpackJson(packed))).toBe(viaJson(v))
          expect(unpackJson(packed)).toStrictEqual(JSON.parse(viaJson(v)))
        }
        if (packed.length < viaJson(v ?? null).length) shaped++
      }),
      { seed: SEED, numRuns: 3000 },
    )
    // The generator reached the shaped form, not only values left as they were.
    expect(shaped).toBeGreaterThan(300)
  })

  it('keeps the awkward cases: arrays that start with a number, __proto__ keys, undefined, toJSON', () => {
    const proto = JSON.parse('{"__proto__":{"x":1},"a":[1,2]}')
    const cases: unknown[] = [
      [1, 2, 3],
      [-1, 'a'],
      [[0, 'x'], 5],
      { list: 'block', type: 'ip' },
      { list: 'block', type: undefined },
      { list: undefined, type: 'ip' },
      { type: 'ip', list: 'block' },
      { list: 'block', type: 'ip', f: () => 1 },
      [undefined, () => 1, { domain: 'x' }],
      proto,
      { at: new Date(Date.UTC(2026, 0, 1)), n: Number.NaN, z: -0 },
      { 2: 'b', 1: 'a', domain: 'c' },
      '~not compact',
      12,
      null,
    ]
    for (const v of cases) {
      expect(jsonText(packJson(v)), viaJson(v)).toBe(viaJson(v))
      expect(unpackJson(packJson(v))).toStrictEqual(JSON.parse(viaJson(v)))
    }
    const back = unpackJson<Record<string, unknown>>(packJson(proto))
    expect(Object.keys(back)).toEqual(['__proto__', 'a'])
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype)
  })

  it('reads rows written before it (plain JSON) as they are', () => {
    const plain = '[{"check":"ipRisk","key":"geoMismatch","weight":20}]'
    expect(jsonText(plain)).toBe(plain)
    expect(unpackJson(plain)).toEqual([{ check: 'ipRisk', key: 'geoMismatch', weight: 20 }])
  })

  it('decodes a stored record as written when it was stored (the shapes only ever grow)', () => {
    // Packed when the table was made; a changed or moved shape would decode it differently.
    const stored =
      '~[[20,"ipRisk","geoMismatch",20,"geo_mismatch","The IP address is in ID, but the event was expected from DE.",[21,"DE","ID","geolocation"]],[20,"deviceIntegrity","headless_browser",45,"headless_browser","The browser is automated or headless.",[42,true]]]'
    expect(jsonText(stored)).toBe(
      '[{"check":"ipRisk","key":"geoMismatch","weight":20,"reason":"geo_mismatch","message":"The IP address is in ID, but the event was expected from DE.","evidence":{"expected_country":"DE","ip_country":"ID","ip_country_source":"geolocation"}},{"check":"deviceIntegrity","key":"headless_browser","weight":45,"reason":"headless_browser","message":"The browser is automated or headless.","evidence":{"is_headless":true}}]',
    )
    const input =
      '~[0,[],"DE",null,[1,56257,"Balai Penyedia","ID",false,null,false,false,null,false,false],[2,"proton.me",false,null,false,0.061,false,"valid"],[42,true],[3,"Europe/Berlin",["DE","DK"]],[4,0,{},0,null],null,[5,[6,"login",{},null,null,null,null],[7,true,true,["dot_trick"]],null,"YxGO0ZuGJ2dpTJeD"],[9,1,[11,2,1,1,1,[12,1795691798452,"i0","residential"],[]],1,[14,2,1795691794644,1795691798452,false,false]]]'
    expect(jsonText(input)).toBe(
      '{"lists":[],"eventCountry":"DE","ipCountry":null,"ip":{"asn":56257,"org":"Balai Penyedia","geoCountry":"ID","isDatacenter":false,"datacenterProvider":null,"isTor":false,"isVpn":false,"vpnProvider":null,"isProxy":false,"isPrivacyRelay":false},"email":{"domain":"proton.me","isDisposable":false,"relay":null,"looksGibberish":false,"gibberishScore":0.061,"hasPlusTag":false,"mx":"valid"},"device":{"is_headless":true},"timezone":{"zone":"Europe/Berlin","countries":["DE","DK"]},"network":{"flaggedOperators":0,"flaggedKinds":{},"trapHits":0,"asn":null},"tls":null,"facts":{"event":{"name":"login","attributes":{},"source":null,"site":null,"campaign":null,"affiliate":null},"email":{"free":true,"aliased":true,"alias_tricks":["dot_trick"]},"phone":null,"subject":"YxGO0ZuGJ2dpTJeD"},"history":{"ipAccounts":1,"device":{"rung":2,"accounts":1,"accountsSameNetwork":1,"recentEvents":1,"current":{"ms":1795691798452,"ipHash":"i0","connection":"residential"},"timeline":[]},"mailboxAccounts":1,"account":{"events":2,"firstMs":1795691794644,"nowMs":1795691798452,"deviceSeen":false,"countrySeen":false}}}',
    )
    // And packing that input again gives the same text: about half the bytes of its JSON.
    expect(packJson(JSON.parse(jsonText(input)))).toBe(input)
    expect(input.length).toBeLessThan(0.55 * jsonText(input).length)
  })
})
