import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { antidetect } from '../../beacon/src/integrity/score.js'
import { sha256Hex } from '../../beacon/src/sha256.js'
import { BEACON_FLAGS, type BeaconFlag } from '../../src/beacon/contract.js'

const DIST = join(import.meta.dirname, '..', '..', 'dist', 'beacon')
const BUDGET = 15 * 1024

describe('beacon bundle (built by the global setup, as `npm install` and `npm run build` do)', () => {
  it('stays within 15 kB gzipped, and the manifest says so', () => {
    const manifest = JSON.parse(readFileSync(join(DIST, 'manifest.json'), 'utf8'))
    const sizes: Record<string, number> = {}
    for (const file of ['verdict.js', 'verdict.mjs']) {
      sizes[file] = gzipSync(readFileSync(join(DIST, file)), { level: 9 }).length
      expect(sizes[file]).toBeLessThanOrEqual(BUDGET)
    }
    console.log(`beacon bundle gzipped: ${JSON.stringify(sizes)} (budget ${BUDGET})`)
    expect(manifest.files).toEqual(sizes)
    expect(manifest.sizeGzip).toBe(Math.max(...Object.values(sizes)))
    expect(manifest.version).toMatch(/^[0-9a-f]{16}$/)
  })

  it('classic build defines the global Verdict; the module build exports collect and watch', () => {
    const classic = readFileSync(join(DIST, 'verdict.js'), 'utf8')
    expect(classic).toMatch(/^var Verdict=/)
    const module = readFileSync(join(DIST, 'verdict.mjs'), 'utf8')
    expect(module).toMatch(/export\s*\{[^}]*\bcollect\b/)
    expect(module).toMatch(/export\s*\{[^}]*\bwatch\b/)
  })
})

describe('pure-JS SHA-256 fallback', () => {
  it('matches Node on block boundaries and multi-byte text', () => {
    for (const text of [
      '',
      'abc',
      'x'.repeat(55),
      'x'.repeat(56),
      'x'.repeat(64),
      'é€😀'.repeat(100),
      'z'.repeat(5000),
    ]) {
      expect(sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'))
    }
  })
})

describe('antidetect score', () => {
  const clean = Object.fromEntries(BEACON_FLAGS.map((f) => [f, f === 'ua_consistent'])) as Record<
    BeaconFlag,
    boolean
  >

  it('is zero for a clean or merely automated browser', () => {
    expect(antidetect(clean)).toEqual({ score: 0, confidence: 'low' })
    expect(antidetect({ ...clean, is_headless: true, is_emulated: true })).toEqual({
      score: 0,
      confidence: 'low',
    })
  })

  it('stays below 50 and low confidence on any single signal', () => {
    for (const f of BEACON_FLAGS) {
      const r = antidetect({ ...clean, [f]: f !== 'ua_consistent' })
      expect(r.score).toBeLessThan(50)
      expect(r.confidence).toBe('low')
    }
  })

  it('grows with independent signals and caps at 100', () => {
    expect(antidetect({ ...clean, is_noise_injected: true, is_tampered: true })).toEqual({
      score: 65,
      confidence: 'medium',
    })
    const all = Object.fromEntries(BEACON_FLAGS.map((f) => [f, f !== 'ua_consistent'])) as Record<
      BeaconFlag,
      boolean
    >
    expect(antidetect(all)).toEqual({ score: 100, confidence: 'high' })
  })
})

describe('the @verdict/beacon package (beacon/package.json)', () => {
  const PKG = join(import.meta.dirname, '..', '..', 'beacon')
  const pkg = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'))

  it('points its ES module, classic script and types at the files the build writes', () => {
    const main = pkg.exports['.']
    expect(main).toEqual({
      types: './dist/verdict.d.ts',
      import: './dist/verdict.mjs',
      default: './dist/verdict.js',
    })
    for (const file of ['verdict.mjs', 'verdict.js'])
      expect(readFileSync(join(PKG, 'dist', file), 'utf8'), file).toBe(readFileSync(join(DIST, file), 'utf8'))
    for (const file of ['verdict.d.ts', 'global.d.ts'])
      expect(readFileSync(join(PKG, 'dist', file), 'utf8'), file).toBe(
        readFileSync(join(PKG, 'types', file), 'utf8'),
      )
    expect(readFileSync(join(PKG, 'dist', 'verdict.d.ts'), 'utf8')).toMatch(
      /export declare function collect\(options: CollectOptions\): Promise<CollectResult>/,
    )
  })
})
