import { sha256Hex } from './sha256.js'

/** SHA-256 hex of a string: the browser's own digest where it has one, the pure-JS one otherwise. */
export async function hashHex(text: string): Promise<string> {
  const subtle = typeof crypto !== 'undefined' ? crypto.subtle : undefined
  if (subtle) {
    try {
      const digest = await subtle.digest('SHA-256', new TextEncoder().encode(text))
      let hex = ''
      for (const byte of new Uint8Array(digest)) hex += byte.toString(16).padStart(2, '0')
      return hex
    } catch {
      // Some embedded browsers expose subtle but refuse digest; the fallback gives the same hash.
    }
  }
  return sha256Hex(text)
}
