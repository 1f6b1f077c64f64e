// The carrier package stores each prefix table as one flat BSON document of string values. Reading that
// subset takes a few lines, so we avoid depending on the package's transitive `bson` version.

const STRING = 0x02

/** Decodes a BSON document whose values are all strings into [key, value] pairs. Throws on anything else. */
export function readBsonStrings(buf: Buffer): Array<[string, string]> {
  if (buf.length < 5) throw new Error('BSON document too short')
  const total = buf.readInt32LE(0)
  if (total !== buf.length || buf[total - 1] !== 0) throw new Error('BSON document length mismatch')
  const out: Array<[string, string]> = []
  let pos = 4
  while (pos < total - 1) {
    const type = buf[pos]
    if (type !== STRING) throw new Error(`unsupported BSON element type ${type} at ${pos}`)
    const keyEnd = buf.indexOf(0, pos + 1)
    if (keyEnd < 0 || keyEnd >= total - 1) throw new Error('unterminated BSON key')
    const key = buf.toString('utf8', pos + 1, keyEnd)
    const len = buf.readInt32LE(keyEnd + 1)
    const start = keyEnd + 5
    const end = start + len - 1
    if (len < 1 || end >= total || buf[end] !== 0) throw new Error(`bad BSON string for key ${key}`)
    out.push([key, buf.toString('utf8', start, end)])
    pos = end + 1
  }
  return out
}
