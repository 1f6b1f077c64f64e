import { execFileSync } from 'node:child_process'

/** The CLI and server tests run the compiled program exactly as users do; build it once up front. */
export default function setup(): void {
  execFileSync(process.execPath, ['scripts/ensure-build.mjs'], { stdio: 'inherit' })
}
