import { describe, expect, it } from 'vitest'
import { Cached, Invalidation, tenantScoped } from '../../src/store/engine/invalidation.js'

/** A load the test finishes by hand, counting how often it was started. */
function loads() {
  let started = 0
  const open: ((v: string) => void)[] = []
  const fail: ((e: Error) => void)[] = []
  return {
    load: () =>
      new Promise<string>((resolve, reject) => {
        started++
        open.push(resolve)
        fail.push(reject)
      }),
    started: () => started,
    finish: (i: number, v: string) => open[i]!(v),
    fail: (i: number) => fail[i]!(new Error('down')),
  }
}

describe('Cached', () => {
  it('serves concurrent misses of one key from one load, then from memory', async () => {
    const c = new Cached<string, string>(new Invalidation(), tenantScoped('t'))
    const l = loads()
    const waiting = [c.get('a', l.load), c.get('a', l.load), c.get('a', l.load)]
    const other = c.get('b', l.load)
    expect(l.started()).toBe(2)
    l.finish(0, 'A')
    l.finish(1, 'B')
    expect(await Promise.all(waiting)).toEqual(['A', 'A', 'A'])
    expect(await other).toBe('B')
    expect(await c.get('a', l.load)).toBe('A')
    expect(l.started()).toBe(2)
  })

  it('a caller after an invalidation does not join a load that started before it', async () => {
    const inv = new Invalidation()
    const c = new Cached<string, string>(inv, tenantScoped('t'))
    const l = loads()
    const early = c.get('a', l.load)
    inv.publishLocal('t:a')
    const late = c.get('a', l.load)
    expect(l.started()).toBe(2)
    l.finish(0, 'old')
    l.finish(1, 'new')
    expect(await early).toBe('old')
    expect(await late).toBe('new')
    // The raced load was returned but not kept; the later one was.
    expect(await c.get('a', l.load)).toBe('new')
    expect(l.started()).toBe(2)
  })

  it('a failed load fails the callers that shared it, and the next call loads again', async () => {
    const c = new Cached<string, string>(new Invalidation(), tenantScoped('t'))
    const l = loads()
    const both = [c.get('a', l.load), c.get('a', l.load)]
    l.fail(0)
    for (const p of both) await expect(p).rejects.toThrow('down')
    const again = c.get('a', l.load)
    expect(l.started()).toBe(2)
    l.finish(1, 'A')
    expect(await again).toBe('A')
  })
})
