import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { auditCommand } from '../../src/cli/audit.js'
import { backupSqlite } from '../../src/services/privacy/backup.js'
import { openStore, type Store } from '../../src/store/index.js'
import { systemClock } from '../../src/util/clock.js'
import { Hasher } from '../../src/util/secrets.js'
import { TEST_SECRET } from '../helpers/build.js'

// Issue 26, items 9 and 11: the files holding password and key hashes are readable by their owner only,
// and the temporary files of a backup or an audit export cannot be redirected by a planted symlink.
const mode = (path: string) => statSync(path).mode & 0o777
const hasher = new Hasher(TEST_SECRET)

let root: string
let store: Store | undefined
afterEach(async () => {
  await store?.close()
  store = undefined
  rmSync(root, { recursive: true, force: true })
})

async function freshStore() {
  root = mkdtempSync(join(tmpdir(), 'verdict-modes-'))
  const dir = join(root, 'data', 'nested')
  const file = join(dir, 'verdict.db')
  store = await openStore({ kind: 'sqlite', file })
  // A write so the WAL and shared-memory files exist.
  await store.db.run("INSERT INTO meta (key, value) VALUES ('file-modes', 'x')")
  return { dir, file }
}

describe('file modes of the SQLite data (item 9)', () => {
  it('creates the data directory 0700 and the database, WAL and shared memory 0600', async () => {
    const old = process.umask(0o022)
    try {
      const { dir, file } = await freshStore()
      expect(mode(dir).toString(8)).toBe('700')
      expect(mode(join(root, 'data')).toString(8)).toBe('700')
      for (const f of [file, `${file}-wal`, `${file}-shm`]) {
        expect(existsSync(f), f).toBe(true)
        expect(mode(f).toString(8), f).toBe('600')
      }
    } finally {
      process.umask(old)
    }
  })

  it('a backup is 0600 from its first byte to after the rename, and its temporary name is not guessable', async () => {
    const old = process.umask(0o022)
    try {
      const { file } = await freshStore()
      const out = join(root, 'backups')
      rmSync(out, { recursive: true, force: true })
      writeFileSync(join(root, 'placeholder'), '')
      const dest = join(root, 'verdict.backup')
      const seen: string[] = []
      const check = (line: string) => {
        // Every file that exists beside the target while the copy runs is the owner's only.
        for (const name of readdirSync(root)) {
          if (name === 'data' || name === 'placeholder') continue
          const path = join(root, name)
          const st = lstatSync(path)
          seen.push(`${name}:${(st.mode & 0o777).toString(8)}:${line}`)
          if (st.isDirectory()) {
            expect(st.mode & 0o777, name).toBe(0o700)
            for (const inner of readdirSync(path)) expect(mode(join(path, inner)), inner).toBe(0o600)
          } else {
            expect(st.mode & 0o777, name).toBe(0o600)
          }
          expect(name).not.toBe(`verdict.backup.partial-${process.pid}`)
        }
      }
      const result = await backupSqlite({ kind: 'sqlite', file }, dest, {
        hasher,
        clock: systemClock,
        force: false,
        progress: check,
      })
      expect(result.backup).toBe(dest)
      expect(seen.length).toBeGreaterThan(0)
      expect(mode(dest).toString(8)).toBe('600')
      // Nothing temporary is left beside it.
      expect(readdirSync(root).sort()).toEqual(['data', 'placeholder', 'verdict.backup'])
    } finally {
      process.umask(old)
    }
  })
})

describe('temporary files of audit export (item 11)', () => {
  it('does not write through a symlink planted at the old predictable temporary name', async () => {
    await freshStore()
    const victim = join(root, 'victim.txt')
    writeFileSync(victim, 'precious')
    const target = join(root, 'audit.json')
    symlinkSync(victim, `${target}.partial-${process.pid}`)
    const outs: unknown[] = []
    const code = await auditCommand(
      'export',
      [target],
      store!,
      hasher,
      (v) => outs.push(v),
      () => {},
    )
    expect(code).toBe(0)
    expect(readFileSync(victim, 'utf8')).toBe('precious')
    expect(lstatSync(target).isFile()).toBe(true)
    expect(mode(target).toString(8)).toBe('600')
    expect(JSON.parse(readFileSync(target, 'utf8'))).toMatchObject({ verdictAudit: 1 })
  })
})
