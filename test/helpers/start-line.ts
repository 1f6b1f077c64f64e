import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { eventually } from './app.js'

/**
 * A start line for child processes raced against each other: each child, once its code is loaded,
 * reports that it waits (a file in `dir`) and waits for `go`; the parent releases them only when all
 * wait, instead of sleeping and hoping they got there.
 */
export interface StartLine {
  /** Code for the child's module script: report waiting, then wait for the go (at most 60 s). */
  childCode: string
  /** Waits (at most 60 s) until `n` children wait, then releases them; says why when they do not. */
  release(children: Promise<unknown>[]): Promise<void>
}

export function startLine(parent: string): StartLine {
  const dir = mkdtempSync(join(parent, 'line-'))
  const go = join(dir, 'go')
  const childCode = `
    {
      const { existsSync, writeFileSync } = await import('node:fs')
      writeFileSync(${JSON.stringify(join(dir, 'waiting-'))} + process.pid, '')
      const end = Date.now() + 60_000
      while (!existsSync(${JSON.stringify(go)})) {
        if (Date.now() > end) throw new Error('no go within 60 s')
        await new Promise((r) => setTimeout(r, 2))
      }
    }`
  const waiting = () => readdirSync(dir).filter((f) => f.startsWith('waiting-')).length
  return {
    childCode,
    async release(children) {
      let exited = false
      void Promise.allSettled(children).then(() => {
        exited = true
      })
      await eventually(() => exited || waiting() === children.length, 60_000, 10)
      if (waiting() !== children.length) {
        const why = exited ? JSON.stringify(await Promise.allSettled(children)) : 'none exited'
        throw new Error(`${waiting()} of ${children.length} children waiting at the line after 60 s; ${why}`)
      }
      writeFileSync(go, '')
    },
  }
}
