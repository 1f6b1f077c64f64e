import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, type Harness } from '../helpers/build.js'

let h: Harness
beforeAll(async () => {
  h = await build()
})
afterAll(async () => {
  await h.close()
})

describe('the console page and its assets', () => {
  it('serves the page revalidated, under a strict Content-Security-Policy', async () => {
    const redirect = await h.app.inject({ url: '/console' })
    expect(redirect.statusCode).toBe(308)
    expect(redirect.headers.location).toBe('/console/')
    const res = await h.app.inject({ url: '/console/' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.headers['cache-control']).toBe('no-cache')
    const csp = String(res.headers['content-security-policy'])
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain('unsafe-inline')
    expect(csp).not.toContain('unsafe-eval')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(res.headers['x-frame-options']).toBe('DENY')
    expect(res.body).not.toMatch(/<script>|<style>| style=/)
    const again = await h.app.inject({
      url: '/console/',
      headers: { 'if-none-match': String(res.headers.etag) },
    })
    expect(again.statusCode).toBe(304)
  })

  it('serves content-hashed assets for a year and nothing else', async () => {
    const page = (await h.app.inject({ url: '/console/' })).body
    const assets = [...page.matchAll(/\/console\/assets\/(app\.[0-9a-f]{12}\.(?:js|css))/g)].map((m) => m[1]!)
    expect(assets).toHaveLength(2)
    for (const name of assets) {
      const res = await h.app.inject({ url: `/console/assets/${name}` })
      expect(res.statusCode).toBe(200)
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable')
      expect(res.headers['content-type']).toMatch(name.endsWith('.js') ? /^text\/javascript/ : /^text\/css/)
    }
    for (const bad of ['app.000000000000.js', '..%2Fmanifest.json', 'index.html']) {
      expect((await h.app.inject({ url: `/console/assets/${bad}` })).statusCode).toBe(404)
    }
  })
})
