import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Parser } from 'commonmark'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')
const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

/** Lines (1-based) that open or close a fenced code block, and those that are headings, per CommonMark. */
function rendered(text: string): { fenceLines: Set<number>; headingLines: Set<number> } {
  const fenceLines = new Set<number>()
  const headingLines = new Set<number>()
  const lines = text.split('\n')
  const walker = new Parser().parse(text).walker()
  for (let step = walker.next(); step; step = walker.next()) {
    const { node, entering } = step
    if (!entering || !node.sourcepos) continue
    // A fenced block starts on its opening fence (an indented one does not).
    if (node.type === 'code_block' && /^\s{0,3}(```|~~~)/.test(lines[node.sourcepos[0][0] - 1] ?? '')) {
      fenceLines.add(node.sourcepos[0][0])
      fenceLines.add(node.sourcepos[1][0])
    }
    if (node.type === 'heading') headingLines.add(node.sourcepos[0][0])
  }
  return { fenceLines, headingLines }
}

/**
 * What the author meant, read line by line: a line starting with ``` toggles a code block, and a
 * `#` line outside one is a heading. CommonMark must agree on both.
 */
function intended(text: string): { fenceLines: number[]; headingLines: number[] } {
  const fenceLines: number[] = []
  const headingLines: number[] = []
  let inCode = false
  text.split('\n').forEach((line, i) => {
    if (/^\s{0,3}```/.test(line)) {
      fenceLines.push(i + 1)
      inCode = !inCode
    } else if (!inCode && /^#{1,6}\s/.test(line)) headingLines.push(i + 1)
  })
  return { fenceLines, headingLines }
}

describe('markdown renders as written (CommonMark)', () => {
  it.each(FILES)('%s: every fence opens or closes a code block, every heading is a heading', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8')
    const got = rendered(text)
    const want = intended(text)
    expect(want.fenceLines.length % 2, `${file}: an unclosed fence`).toBe(0)
    expect(
      want.fenceLines.filter((n) => !got.fenceLines.has(n)),
      `${file}: fence lines that CommonMark does not read as a fence's start or end`,
    ).toEqual([])
    expect(
      want.headingLines.filter((n) => !got.headingLines.has(n)),
      `${file}: heading lines rendered as something else`,
    ).toEqual([])
  })
})
