#!/usr/bin/env node
// The `verdict` CLI entry: makes sure dist/ is current, then runs the compiled CLI.
import { execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
execFileSync(process.execPath, [join(root, 'scripts', 'ensure-build.mjs')], {
  stdio: ['ignore', 'ignore', 'inherit'],
})
const { main } = await import(join(root, 'dist', 'src', 'cli', 'main.js'))
process.exitCode = await main(process.argv.slice(2))
