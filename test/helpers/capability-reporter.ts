import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import type { Reporter, TestModule } from 'vitest/node'
import { CAPABILITY_DIR_VAR, type MissingMarker } from './capabilities.js'

/**
 * Prints, after vitest's own summary, which capabilities this machine lacked and how many tests were
 * skipped for them (test/helpers/capabilities.ts writes one marker per missing capability and file).
 * The marker directory is made in the main process before any worker starts, once per process (vitest
 * evaluates the config file again for each project).
 */
export class CapabilityReporter implements Reporter {
  readonly dir: string
  constructor() {
    process.env[CAPABILITY_DIR_VAR] ??= mkdtempSync(join(tmpdir(), 'verdict-capabilities-'))
    this.dir = process.env[CAPABILITY_DIR_VAR]
    mkdirSync(this.dir, { recursive: true })
  }

  onTestRunStart(): void {
    for (const f of readdirSync(this.dir)) rmSync(join(this.dir, f), { force: true })
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const markers: MissingMarker[] = []
    for (const f of readdirSync(this.dir)) {
      for (const line of readFileSync(join(this.dir, f), 'utf8').split('\n')) {
        if (line) markers.push(JSON.parse(line) as MissingMarker)
      }
    }
    rmSync(this.dir, { recursive: true, force: true })
    if (markers.length === 0) return
    const skippedIn = new Map<string, number>()
    for (const m of modules) skippedIn.set(m.moduleId, [...m.children.allTests('skipped')].length)
    const byCapability = new Map<string, { reasons: Set<string>; files: Set<string> }>()
    for (const m of markers) {
      const entry = byCapability.get(m.capability) ?? { reasons: new Set(), files: new Set() }
      entry.reasons.add(m.reason)
      if (m.file) entry.files.add(m.file)
      byCapability.set(m.capability, entry)
    }
    const lines = [
      '',
      'Missing capabilities (their tests were SKIPPED; CI sets VERDICT_REQUIRE_ALL=1 and fails instead):',
    ]
    for (const [capability, { reasons, files }] of byCapability) {
      const skipped = [...files].reduce((n, f) => n + (skippedIn.get(f) ?? 0), 0)
      const names = [...files].map((f) => relative(process.cwd(), f)).sort()
      lines.push(`  ${capability}: ${[...reasons].join('; ')}`)
      lines.push(
        `    ${skipped} skipped test(s) in ${names.length} file(s)${names.length ? `: ${names.join(', ')}` : ''}`,
      )
    }
    process.stdout.write(`${lines.join('\n')}\n\n`)
  }
}
