import { describe, expect, it } from 'vitest'
import { ATTACKS } from '../../bench/quality/attacks.js'
import { measureGibberish } from '../../bench/quality/gibberish-names.js'
import { LEGIT } from '../../bench/quality/legit.js'
import { rocAuc, summarise } from '../../bench/quality/report.js'
import { simulate } from '../../bench/quality/simulate.js'

describe('quality simulator', () => {
  it('computes the ROC AUC with ties counted half', () => {
    expect(
      rocAuc([
        { label: 0, score: 0 },
        { label: 1, score: 10 },
      ]),
    ).toBe(1)
    expect(
      rocAuc([
        { label: 1, score: 0 },
        { label: 0, score: 10 },
      ]),
    ).toBe(0)
    expect(
      rocAuc([
        { label: 0, score: 5 },
        { label: 1, score: 5 },
      ]),
    ).toBe(0.5)
  })

  it('scores a small labelled run through the app with every population and attack present', async () => {
    const scored = await simulate({ seed: 7, events: 1500 })
    const s = summarise(scored)
    expect(s.legit.events).toBeGreaterThan(0)
    expect(s.attack.events).toBeGreaterThan(0)
    const pops = new Set(scored.map((e) => e.pop.replace(/_(akamai|cloudflare)$/, '')))
    for (const [name] of [...LEGIT, ...ATTACKS]) expect(pops, name).toContain(name)
    expect(s.auc).toBeGreaterThan(0.5)
    expect(s.auc).toBeLessThanOrEqual(1)
  }, 120_000)

  it('measures the gibberish model on real names of many locales and on generated names', () => {
    const m = measureGibberish(100, 3, 2000)
    // Every Latin-script locale of faker is present; other scripts are left out, not mangled into names.
    expect(m.locales.length).toBeGreaterThan(40)
    expect(m.locales.map((l) => l.locale)).toEqual(expect.arrayContaining(['en_US', 'de', 'tr', 'yo_NG']))
    expect(m.locales.every((l) => l.names === 100)).toBe(true)
    expect(m.flagged / m.names).toBeLessThan(0.1)
    expect(m.machineFlagged / m.machine).toBeGreaterThan(0.9)
  })
})
