import { describe, expect, it } from 'vitest'
import { type HeldRow, heldByInterface } from '../../bench/quality/held.js'
import { DAY, START, WARMUP_DAYS } from '../../bench/quality/world.js'

const t = START + WARMUP_DAYS * DAY + 1
const row = (label: 0 | 1, verdict: HeldRow['verdict'], fired: [string, number][], pop = 'p'): HeldRow => ({
  t,
  label,
  pop,
  score: fired.reduce((s, [, w]) => s + w, 0),
  verdict,
  fired: fired.map(([reason, weight]) => ({ reason, weight })),
})

describe('what the interface decides in the simulator', () => {
  it("counts a legitimate flag as the interface's only when its own codes reach review", () => {
    const h = heldByInterface([
      row(0, 'review', [['datacenter_ip', 45]], 'vpn'),
      row(
        0,
        'review',
        [
          ['vpn_ip', 30],
          ['geo_mismatch', 20],
        ],
        'vpn',
      ),
      // Our own signal carries it over the line: not the interface's.
      row(
        0,
        'review',
        [
          ['geo_mismatch', 20],
          ['account_takeover', 35],
        ],
        'traveller',
      ),
      row(0, 'allow', [['datacenter_ip', 45]], 'vpn'),
      row(0, 'allow', [], 'home'),
      // Before the warm-up ends: not counted.
      { ...row(0, 'review', [['datacenter_ip', 45]], 'vpn'), t: START },
    ])
    expect(h.legit).toMatchObject({ events: 5, flagged: 3, held: 2 })
    expect(h.legit.byPop.get('vpn')).toEqual({ flagged: 2, held: 2 })
    expect(h.legit.byPop.get('traveller')).toEqual({ flagged: 1, held: 0 })
    expect([...h.heldBy]).toEqual([
      ['datacenter_ip', 1],
      ['geo_mismatch+vpn_ip', 1],
    ])
    expect(
      heldByInterface(
        [
          row(0, 'review', [
            ['vpn_ip', 30],
            ['geo_mismatch', 20],
          ]),
        ],
        60,
      ).legit.held,
    ).toBe(0)
  })

  it('sorts unblocked attacks into silent, held by a may-not-block-alone rule, and the rest', () => {
    const h = heldByInterface([
      row(1, 'allow', []),
      row(1, 'allow', [['email_relay', 0]]),
      row(1, 'review', [['device_reuse', 40]]),
      row(1, 'review', [
        ['device_reuse', 40],
        ['noise_injected', 45],
      ]),
      row(1, 'review', [
        ['device_reuse', 40],
        ['geo_mismatch', 20],
      ]),
      row(1, 'review', [
        ['gibberish_email', 20],
        ['gibberish_wave', 25],
      ]),
      row(1, 'allow', [['ip_velocity', 25]]),
      row(1, 'allow', [
        ['gibberish_email', 20],
        ['mailbox_reuse', 15],
      ]),
      row(1, 'block', [
        ['datacenter_ip', 45],
        ['ip_velocity', 40],
      ]),
    ])
    expect(h.attacks).toEqual({
      events: 9,
      notBlocked: 8,
      silent: 2,
      notAlone: 2,
      // device_reuse with geo_mismatch, and ip_velocity alone; not the two carrying a signal of ours.
      interfaceOnly: 2,
      allowed: 4,
      allowedSilent: 2,
      allowedInterfaceOnly: 1,
    })
  })

  it('puts the AUC ceiling where silent attacks tie with the customers they look like', () => {
    const customers = [row(0, 'allow', []), row(0, 'allow', []), row(0, 'review', [['datacenter_ip', 45]])]
    // One attack outscored by a customer, one silent: the first would rank top, the second ties with two.
    const h = heldByInterface([...customers, row(1, 'allow', [['ip_velocity', 25]]), row(1, 'allow', [])])
    // Pairs won: 3 by the signalled attack; 0.5 + 0.5 + 0 by the silent one; of 6.
    expect(h.aucCeiling).toBeCloseTo(4 / 6, 10)
  })
})
