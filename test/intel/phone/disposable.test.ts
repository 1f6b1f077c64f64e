import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadDisposableNumbers } from '../../../src/intel/phone/disposable.js'
import { createPhoneIntel } from '../../../src/intel/phone/index.js'

const tmp = mkdtempSync(join(tmpdir(), 'verdict-disposable-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

describe('loadDisposableNumbers', () => {
  it('matches E.164 numbers with or without the plus and reports the newest date', () => {
    const file = join(tmp, 'list.json')
    writeFileSync(
      file,
      JSON.stringify({ '447400123456': '2023-05-01', '12025550123': '2024-02-29', junk: 'x' }),
    )
    const list = loadDisposableNumbers(file)
    expect(list).toMatchObject({ loaded: true, entries: 2, newest: '2024-02-29' })
    expect(list.has('+447400123456')).toBe(true)
    expect(list.has('12025550123')).toBe(true)
    expect(list.has('+447400123457')).toBe(false)
  })

  it('treats a missing or malformed file as not loaded', () => {
    const bad = join(tmp, 'bad.json')
    writeFileSync(bad, '["447400123456"]')
    for (const file of [join(tmp, 'missing.json'), bad]) {
      const list = loadDisposableNumbers(file)
      expect(list).toMatchObject({ loaded: false, entries: 0, newest: null })
      expect(list.has('+447400123456')).toBe(false)
    }
  })
})

describe('disposable numbers from the packaged list', () => {
  const intel = createPhoneIntel()

  it('flags numbers listed on public receive-SMS sites, in any notation', () => {
    expect(intel.analyze('+1 201-201-8360')).toMatchObject({ valid: true, isDisposable: true })
    expect(intel.analyze('0113 320 3950', 'GB')).toMatchObject({ valid: true, isDisposable: true })
  })

  it('does not flag an unlisted neighbour', () => {
    expect(intel.analyze('+1 201-201-8361').isDisposable).toBe(false)
  })
})
