import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadSettings } from '../../src/config/settings.js'

describe('TLS and JA4 settings', () => {
  it('are off by default', () => {
    const s = loadSettings({})
    expect(s.tls).toBeUndefined()
    expect(s.ja4Header).toBeUndefined()
  })

  it('take both TLS files together, as absolute paths', () => {
    const s = loadSettings({ TLS_CERT_FILE: 'certs/cert.pem', TLS_KEY_FILE: '/etc/verdict/key.pem' })
    expect(s.tls).toEqual({ certFile: resolve('certs/cert.pem'), keyFile: '/etc/verdict/key.pem' })
    // Blank counts as unset, like every other variable.
    expect(loadSettings({ TLS_CERT_FILE: ' ', TLS_KEY_FILE: '' }).tls).toBeUndefined()
  })

  it('refuse one TLS file without the other, naming the missing one', () => {
    expect(() => loadSettings({ TLS_CERT_FILE: 'cert.pem' })).toThrow(
      /TLS_CERT_FILE and TLS_KEY_FILE must be set together \(only TLS_CERT_FILE is set\)/,
    )
    expect(() => loadSettings({ TLS_KEY_FILE: 'key.pem' })).toThrow(/only TLS_KEY_FILE is set/)
  })

  it('refuse HOST=localhost with TLS (Fastify would add a second, plain listener for ::1)', () => {
    const files = { TLS_CERT_FILE: 'c.pem', TLS_KEY_FILE: 'k.pem' }
    expect(() => loadSettings({ ...files, HOST: 'localhost' })).toThrow(
      /HOST=localhost cannot be used with TLS/,
    )
    expect(loadSettings({ ...files, HOST: '0.0.0.0' }).tls).toBeDefined()
    expect(loadSettings({ HOST: 'localhost' }).host).toBe('localhost')
  })

  it('read VERDICT_JA4_HEADER as a lower-cased header name, only together with TRUST_PROXY', () => {
    expect(
      loadSettings({ VERDICT_JA4_HEADER: 'CloudFront-Viewer-JA4-Fingerprint', TRUST_PROXY: '1' }).ja4Header,
    ).toBe('cloudfront-viewer-ja4-fingerprint')
    expect(() => loadSettings({ VERDICT_JA4_HEADER: 'x-ja4' })).toThrow(
      /VERDICT_JA4_HEADER is honoured only from trusted proxies: set TRUST_PROXY/,
    )
    for (const bad of ['x ja4', 'x-ja4:', 'é'])
      expect(() => loadSettings({ VERDICT_JA4_HEADER: bad, TRUST_PROXY: '1' }), bad).toThrow(
        `VERDICT_JA4_HEADER must be an HTTP header name, got "${bad}"`,
      )
  })
})
