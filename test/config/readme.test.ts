import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { EnvSchema, envVar } from '../../src/config/schema.js'
import { FEED_NAMES, feedUrlEnvVar } from '../../src/intel/feeds/catalog.js'

const ROOT = join(import.meta.dirname, '..', '..')

/** The README's configuration table: one row per variable, `| variable | default | meaning |`. */
function readmeTable(): { variable: string; defaultCell: string; meaning: string }[] {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n')
  const start = lines.findIndex((l) => l.trim() === '| variable | default | meaning |')
  expect(start, 'README has the configuration table').toBeGreaterThanOrEqual(0)
  const rows = []
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break
    const [variable = '', defaultCell = '', ...meaning] = line
      .slice(1, -1)
      .split(' | ')
      .map((c) => c.trim())
    rows.push({ variable, defaultCell, meaning: meaning.join(' | ') })
  }
  return rows
}

/**
 * What the default column must say for a variable: the schema's `defaultText` where the default is
 * not one literal value (`off`, `unset`, `generated (SQLite)`…), else the default in backticks.
 */
function documentedDefault(name: string): string {
  const schema = envVar(name)!
  return schema.defaultText ?? `\`${String(schema.default)}\``
}

// The feed URL variables are one row, `VERDICT_FEED_<NAME>_URL`, whose meaning lists every <NAME>.
const FEED_PATTERN = '`VERDICT_FEED_<NAME>_URL`'
const feedVars = FEED_NAMES.map(feedUrlEnvVar)

describe('README configuration table', () => {
  const rows = readmeTable()

  it('lists exactly the variables of the schema, one per row', () => {
    const listed: string[] = []
    for (const row of rows) {
      if (row.variable === FEED_PATTERN) {
        listed.push(...feedVars)
        continue
      }
      expect(row.variable, 'one backticked variable per row').toMatch(/^`[A-Z][A-Z0-9_]*`$/)
      listed.push(row.variable.slice(1, -1))
    }
    expect(new Set(listed).size, 'no variable twice').toBe(listed.length)
    expect([...listed].sort()).toEqual(Object.keys(EnvSchema.properties).sort())
  })

  it('gives each variable the default the schema declares', () => {
    for (const row of rows) {
      const names = row.variable === FEED_PATTERN ? feedVars : [row.variable.slice(1, -1)]
      for (const name of names) expect(row.defaultCell, name).toBe(documentedDefault(name))
    }
  })

  it('names every feed in the feed URL row', () => {
    const row = rows.find((r) => r.variable === FEED_PATTERN)!
    for (const name of feedVars) {
      const part = name.replace(/^VERDICT_FEED_|_URL$/g, '')
      expect(row.meaning, name).toContain(`\`${part}\``)
    }
  })
})

/** Every .ts file under a directory. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name))
}

describe('the environment has one reader', () => {
  it('no module in src/ but config/settings.ts touches process.env', () => {
    const readers = sources(join(ROOT, 'src'))
      .filter((file) => /process\s*(\.|\?\.|\[\s*['"`])\s*env\b/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file))
    expect(readers).toEqual(['src/config/settings.ts'])
  })
})
