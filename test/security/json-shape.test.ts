import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { badRequest } from '../../src/errors.js'
import { checkJsonShape, MAX_JSON_DEPTH } from '../../src/plugins/json-body.js'

/**
 * The pre-check before the linear rewrite (issue 26, item 1), kept here only as the reference its
 * verdicts are compared with. It searched for the next backslash from the start of every string, so a
 * body of many strings without a backslash cost O(n²).
 */
function referenceCheck(text: string): void {
  interface Frame {
    path: string
    keys: Set<string> | null
    index: number
    underConstructor: boolean
  }
  const member = (path: string, key: string) => `${path}.${key}`
  const nulRefused = (path: string) => badRequest(`${path} must not contain the NUL character (U+0000)`)
  const valuePath = (top: Frame | undefined, pendingKey: string | null) =>
    !top ? 'body' : top.keys === null ? `${top.path}[${top.index}]` : member(top.path, pendingKey ?? '')
  const stack: Frame[] = []
  let pendingKey: string | null = null
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      const start = i
      let nul = false
      let escaped = false
      let close = text.indexOf('"', i + 1)
      let slash = text.indexOf('\\', i + 1)
      while (slash !== -1 && close !== -1 && slash < close) {
        escaped = true
        if (text.startsWith('u0000', slash + 1)) nul = true
        if (close === slash + 1) close = text.indexOf('"', close + 1)
        slash = text.indexOf('\\', slash + 2)
      }
      if (close === -1) return
      i = close
      const top = stack[stack.length - 1]
      if (!top || top.keys === null || pendingKey !== null) {
        if (nul) throw nulRefused(valuePath(top, pendingKey))
        continue
      }
      let key = text.slice(start + 1, i)
      if (escaped) {
        try {
          key = JSON.parse(text.slice(start, i + 1)) as string
        } catch {
          return
        }
      }
      if (nul) throw nulRefused(member(top.path, key))
      if (key === '__proto__' || (key === 'prototype' && top.underConstructor))
        throw badRequest(`${member(top.path, key)} is not an allowed field`)
      if (top.keys.has(key)) throw badRequest(`${member(top.path, key)} is sent more than once`)
      top.keys.add(key)
      pendingKey = key
    } else if (c === 0x7b || c === 0x5b) {
      const top = stack[stack.length - 1]
      const path = valuePath(top, pendingKey)
      if (stack.length >= MAX_JSON_DEPTH)
        throw badRequest(`${path} is nested more than ${MAX_JSON_DEPTH} levels deep`)
      stack.push({
        path,
        keys: c === 0x7b ? new Set() : null,
        index: 0,
        underConstructor: c === 0x7b && top?.keys !== null && pendingKey === 'constructor',
      })
      pendingKey = null
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop()
      pendingKey = null
    } else if (c === 0x2c) {
      const top = stack[stack.length - 1]
      if (top && top.keys === null) top.index++
      pendingKey = null
    }
  }
}

const verdict = (check: (text: string) => void, text: string): string => {
  try {
    check(text)
    return 'ok'
  } catch (err) {
    return (err as Error).message
  }
}

/** JSON-ish text from the tokens the checker cares about: quotes, escapes, brackets, the refused keys. */
const tokens = fc.constantFrom(
  '{',
  '}',
  '[',
  ']',
  '"',
  '\\',
  '\\"',
  '\\\\',
  '\\u0000',
  '\\u0065',
  'u0000',
  ':',
  ',',
  ' ',
  'a',
  'e',
  '"a"',
  '"e"',
  '"__proto__"',
  '"constructor"',
  '"prototype"',
  '"\\u0000"',
  '""',
  '1',
  'true',
)
const jsonish = fc.array(tokens, { maxLength: 60 }).map((t) => t.join(''))

/** Valid JSON with duplicate and refused keys mixed in. */
const keyName = fc.constantFrom(
  'a',
  'b',
  'e',
  '\\u0065',
  '__proto__',
  'constructor',
  'prototype',
  'x\\u0000',
  'q\\"',
)
const jsonValue: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('1', 'null', '""', '"s"', '"\\\\"', '"\\u0000"', '"a\\"b"'),
    fc.array(tie('v'), { maxLength: 4 }).map((xs) => `[${xs.join(',')}]`),
    fc
      .array(fc.tuple(keyName, tie('v')), { maxLength: 4 })
      .map((kv) => `{${kv.map(([k, v]) => `"${k}":${v}`).join(',')}}`),
  ),
})).v

describe('checkJsonShape (issue 26, item 1)', () => {
  it('gives the same verdict as the reference implementation on generated bodies', () => {
    fc.assert(
      fc.property(fc.oneof(jsonish, jsonValue, fc.json()), (text) => {
        expect(verdict(checkJsonShape, text)).toBe(verdict(referenceCheck, text))
      }),
      { numRuns: 3000 },
    )
  })

  it('gives the same verdict on deep nesting', () => {
    for (const depth of [MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1]) {
      const text = `${'{"a":['.repeat(depth)}${']}'.repeat(depth)}`
      expect(verdict(checkJsonShape, text)).toBe(verdict(referenceCheck, text))
    }
  })

  it('is linear: four times the strings cost about four times the time, not sixteen', () => {
    // The worst case of the old check: many short strings and no backslash anywhere (300 KB, 1.2 MB).
    const body = (n: number) => `[${'"",'.repeat(n - 1)}""]`
    const small = body(100_000)
    const large = body(400_000)
    const time = (text: string) => {
      const t0 = performance.now()
      checkJsonShape(text)
      return performance.now() - t0
    }
    time(small) // warm-up
    // Alternating rounds, the best of each: other work on a shared machine only ever adds time.
    let bestSmall = Number.POSITIVE_INFINITY
    let bestLarge = Number.POSITIVE_INFINITY
    for (let round = 0; round < 7; round++) {
      bestSmall = Math.min(bestSmall, time(small))
      bestLarge = Math.min(bestLarge, time(large))
    }
    // Linear ≈ 4, the quadratic check ≈ 16; the bound leaves room for a noisy shared machine.
    expect(bestLarge / Math.max(bestSmall, 0.05)).toBeLessThan(9)
  }, 120_000)
})
