/**
 * Pure-JS SHA-256 over UTF-8 text, used only where `crypto.subtle` is missing (plain http on a host other
 * than localhost is not a secure context). No DOM or Node imports: the Node tests check it against Node's own.
 */

const K = new Uint32Array(64)
const H0 = new Uint32Array(8)
;(() => {
  // The constants are the fractional parts of the square and cube roots of the first primes.
  const frac = (x: number) => ((x - Math.floor(x)) * 0x100000000) >>> 0
  let n = 0
  for (let p = 2; n < 64; p++) {
    let prime = true
    for (let d = 2; d * d <= p; d++) if (p % d === 0) prime = false
    if (!prime) continue
    if (n < 8) H0[n] = frac(p ** 0.5)
    K[n++] = frac(p ** (1 / 3))
  }
})()

function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text)
}

export function sha256Hex(text: string): string {
  const data = utf8(text)
  const bitLen = data.length * 8
  const padded = new Uint8Array((((data.length + 9 + 63) >> 6) << 6) >>> 0)
  padded.set(data)
  padded[data.length] = 0x80
  const view = new DataView(padded.buffer)
  view.setUint32(padded.length - 8, Math.floor(bitLen / 0x100000000))
  view.setUint32(padded.length - 4, bitLen >>> 0)
  const h = H0.slice()
  const w = new Uint32Array(64)
  const rotr = (x: number, r: number) => (x >>> r) | (x << (32 - r))
  for (let off = 0; off < padded.length; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(off + i * 4)
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!
      const b = w[i - 2]!
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3)
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10)
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) >>> 0
    }
    let a = h[0]!
    let b = h[1]!
    let c = h[2]!
    let d = h[3]!
    let e = h[4]!
    let f = h[5]!
    let g = h[6]!
    let k = h[7]!
    for (let i = 0; i < 64; i++) {
      const t1 = (k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) >>> 0
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0
      k = g
      g = f
      f = e
      e = (d + t1) >>> 0
      d = c
      c = b
      b = a
      a = (t1 + t2) >>> 0
    }
    const out = [a, b, c, d, e, f, g, k]
    for (let i = 0; i < 8; i++) h[i] = (h[i]! + out[i]!) >>> 0
  }
  let hex = ''
  for (const x of h) hex += x.toString(16).padStart(8, '0')
  return hex
}
