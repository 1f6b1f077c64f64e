import { describe, expect, it } from 'vitest'
import { score } from '../../src/scoring/engine.js'
import type { EngineInput, TlsSignals } from '../../src/scoring/types.js'
import { input, residential } from './fixtures.js'

const CURL = 't13d3112h2_e8f1e7e78f70_b26ce05bbdd6'
const CHROME = 't13d1517h2_8daaf6152771_cb7bf5808d99'
const SPOOFY = 't13d1516h2_8daaf6152771_02713d6af862'
const flagged = { sessions: 80, spoofing: 72, minSessions: 50, minShare: 0.7 }

const tls = (ja4: string, over: Partial<TlsSignals> = {}): TlsSignals => ({
  ja4,
  knownTool: null,
  spoofSignature: null,
  ...over,
})

interface Row {
  name: string
  input: Partial<EngineInput>
  /** reason -> weight expected; every other reason must be absent. */
  fires: Record<string, number>
  verdict: 'allow' | 'review' | 'block'
}

const ROWS: Row[] = [
  { name: 'no beacon JA4', input: { tls: null }, fires: {}, verdict: 'allow' },
  { name: 'a browser JA4, not flagged', input: { tls: tls(CHROME) }, fires: {}, verdict: 'allow' },
  {
    name: 'known tool: forged_beacon alone reaches review, not block',
    input: { tls: tls(CURL, { knownTool: 'curl' }) },
    fires: { forged_beacon: 45 },
    verdict: 'review',
  },
  {
    name: 'known tool from a datacenter: blocks with a second signal',
    input: { ip: { ...residential, isDatacenter: true }, tls: tls(CURL, { knownTool: 'curl' }) },
    fires: { datacenter_ip: 45, forged_beacon: 45 },
    verdict: 'block',
  },
  {
    name: 'spoofing signature: known_spoof_signature alone stays below review',
    input: { tls: tls(SPOOFY, { spoofSignature: flagged }) },
    fires: { known_spoof_signature: 35 },
    verdict: 'allow',
  },
  {
    name: 'spoofing signature with a tampered browser',
    input: { device: { is_tampered: true }, tls: tls(SPOOFY, { spoofSignature: flagged }) },
    fires: { device_tampered: 45, known_spoof_signature: 35 },
    verdict: 'block',
  },
  {
    name: 'known tool and a signature: only forged_beacon, never both',
    input: { tls: tls(CURL, { knownTool: 'curl', spoofSignature: flagged }) },
    fires: { forged_beacon: 45 },
    verdict: 'review',
  },
  {
    name: 'without request device flags the TLS checks still fire',
    input: { device: null, tls: tls(CURL, { knownTool: 'node-fetch' }) },
    fires: { forged_beacon: 45 },
    verdict: 'review',
  },
]

describe('TLS fingerprint checks', () => {
  it.each(ROWS)('$name', (row) => {
    const r = score(input(row.input))
    expect(Object.fromEntries(r.checks.map((c) => [c.reason, c.weight]))).toEqual(row.fires)
    expect(r.verdict).toBe(row.verdict)
    for (const c of r.checks.filter(
      (x) => x.reason === 'forged_beacon' || x.reason === 'known_spoof_signature',
    ))
      expect(c.check).toBe('deviceIntegrity')
  })

  it('carries the evidence: the JA4 and the tool, or the counts and thresholds', () => {
    const forged = score(input({ tls: tls(CURL, { knownTool: 'curl' }) })).checks[0]!
    expect(forged.evidence).toEqual({ ja4: CURL, tool: 'curl' })
    expect(forged.message).toContain('curl')
    const spoof = score(input({ tls: tls(SPOOFY, { spoofSignature: flagged }) })).checks[0]!
    expect(spoof.evidence).toEqual({
      ja4: SPOOFY,
      sessions: 80,
      spoofing: 72,
      share: 0.9,
      min_sessions: 50,
      min_share: 0.7,
    })
  })

  it('fires after the other device integrity checks and before the time zone', () => {
    const r = score(
      input({
        ip: residential,
        device: { is_headless: true },
        timezone: { zone: 'Europe/Berlin', countries: ['DE'] },
        tls: tls(CURL, { knownTool: 'curl' }),
      }),
    )
    expect(r.reasons).toEqual(['headless_browser', 'forged_beacon', 'timezone_mismatch'])
  })
})
