import { describe, expect, it } from 'vitest'
import { backgroundJobs } from '../../src/jobs/index.js'
import {
  flaggedSignatures,
  isSpoofingBeacon,
  ja4WindowStart,
} from '../../src/services/devices/ja4-signatures.js'

const DAY = 86_400_000

describe('which beacons count as spoofing', () => {
  it.each([
    [{}, false],
    [{ is_headless: true }, false],
    [{ is_emulated: true }, false],
    [{ ua_consistent: true }, false],
    [{ ua_consistent: false }, true],
    [{ is_tampered: true }, true],
    [{ is_noise_injected: true }, true],
    [{ is_context_mismatch: true }, true],
    [{ is_engine_mismatch: true }, true],
    [{ is_os_mismatch: true }, true],
    [{ antidetect_score: 50, antidetect_confidence: 'medium' }, true],
    [{ antidetect_score: 90, antidetect_confidence: 'high' }, true],
    [{ antidetect_score: 49, antidetect_confidence: 'high' }, false],
    [{ antidetect_score: 90, antidetect_confidence: 'low' }, false],
  ] as const)('%j -> %s', (flags, spoofing) => {
    expect(isSpoofingBeacon(flags)).toBe(spoofing)
  })
})

describe('the flagged set', () => {
  it('needs 50 beacons and a 70 % spoofing share, and never takes a known tool', () => {
    const rows = [
      { ja4: 't13d1715h2_5b57614c22b0_000000000001', sessions: 50, spoofing: 35 },
      { ja4: 't13d1715h2_5b57614c22b0_000000000002', sessions: 49, spoofing: 49 },
      { ja4: 't13d1715h2_5b57614c22b0_000000000003', sessions: 1000, spoofing: 699 },
      { ja4: 't13d3112h2_e8f1e7e78f70_b26ce05bbdd6', sessions: 500, spoofing: 500 },
    ]
    expect(flaggedSignatures(rows).map((r) => r.ja4)).toEqual(['t13d1715h2_5b57614c22b0_000000000001'])
  })

  it('counts whole UTC days, 30 of them or the retention period when shorter', () => {
    const now = 100 * DAY + 5 * 3_600_000
    expect(ja4WindowStart(now, 90)).toBe(70 * DAY)
    expect(ja4WindowStart(now, 7)).toBe(93 * DAY)
  })

  it('runs the computation on one node and the cache on every node', () => {
    const jobs = backgroundJobs({ feedsReloadMs: 60_000, retentionDays: 90 })
    expect(jobs.find((j) => j.name === 'ja4-signatures')?.scope).toBe('cluster')
    expect(jobs.find((j) => j.name === 'ja4-signatures-cache')?.scope).toBe('node')
  })
})
