import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { resolveSecret, SecretError } from '../config/secret.js'
import { loadSettings, type Settings } from '../config/settings.js'
import { createTenant, issueKey, revokeKey, rotateKey, TenantAdminError } from '../services/access/tenants.js'
import { withStartupLock } from '../services/runtime/startup-lock.js'
import { openStore, type StorageTarget, type Store } from '../store/index.js'
import { systemClock } from '../util/clock.js'
import { Hasher } from '../util/secrets.js'
import { packageVersion } from '../version.js'
import { auditCommand } from './audit.js'
import { backupCommand } from './backup.js'
import { UsageError } from './errors.js'
import { feeds } from './feeds.js'
import { replayCommand } from './replay.js'
import { reportCommand } from './report.js'
import { traps } from './traps.js'
import { type Input, users } from './users.js'

/** Each command's usage lines, by command group: `verdict <group> --help` prints its own. */
const COMMANDS: Record<string, string> = {
  tenants: `  tenants create --name NAME [--share-network] [--rate-limit N] [--monthly-quota N]
                 [--allow-duplicate-name]
                                    a tenant and its first key (a name already in use is refused
                                    unless --allow-duplicate-name)
  tenants list
  tenants delete TENANT_ID          the tenant and all of its data`,
  keys: `  keys list --tenant TENANT_ID      id, kind, prefix, created, last used, state of every key
  keys create --tenant TENANT_ID [--publishable --origin https://shop.example[,…]]
                                    (--publishable: a pk_ key for the browser beacon only)
  keys rotate KEY_ID                a new key; the old one stops working
  keys revoke KEY_ID`,
  users: `  users create --tenant TENANT_ID --email EMAIL [--password-stdin]
                                    a console user; asks for the password on the terminal
                                    (--password-stdin: reads it from standard input instead)
  users list [--tenant TENANT_ID]
  users delete USER_ID|EMAIL [--tenant T]   the user and every session they have`,
  feeds: `  feeds update [--only NAME,NAME] [--force]
                                    download Tor/relay/VPN/proxy/datacenter feeds
  feeds import NAME FILE [--force]  load a feed from a file in its upstream format
                                    (--force: accept data that shrinks a feed by more than half)
  feeds status                      every reference-data source with its date and size`,
  traps: `  traps import FILE                 record abuse-trap hits, one IP[,TIME[,PATH]] per line`,
  backup: `  backup FILE [--force]             online, consistent copy of the SQLite database (server may run)`,
  restore: `  restore FILE                      replace the stopped SQLite database with a backup, then erase
                                    again everyone erased since (the suppression audit)`,
  audit: `  audit export FILE [--force]       the suppression audit of every tenant, as one JSON file
  audit apply FILE                  add those suppressions and erase again every identifier
                                    they forgot (after a PostgreSQL restore)`,
  replay: `  replay EVENT_ID                   decide a recorded event again from its recorded inputs, under its
                                    config version: recorded and replayed decisions side by side`,
  report: `  report rules --tenant TENANT_ID [--window-days N] [--json]
                                    per reason code: fired, labelled outcomes, precision with its
                                    95 % interval, recall, suggested weight (a table; --json: JSON)`,
}

const FOOTER = `Options of every command: --database URL (overrides DATABASE_URL), --help; verdict --version.
Tenant, key, user, backup and restore commands use DATABASE_URL (default ./data/verdict.db) and say
on stderr when they create a new database; feed commands use VERDICT_FEEDS_DIR (default ./data/feeds).
Results are JSON on stdout (report rules: a table unless --json), progress on stderr.`

export const USAGE = `usage: verdict <command>

${Object.values(COMMANDS).join('\n')}

${FOOTER}`

/** The usage of one command group (and its footer). */
export function commandUsage(group: string): string {
  return `usage: verdict ${group} …\n\n${COMMANDS[group]}\n\n${FOOTER}`
}

/** A short pointer for a usage error: the command's own usage is a --help away. */
const hint = (group: string | undefined) =>
  group && COMMANDS[group] ? `run: verdict ${group} --help` : 'run: verdict --help'

/** `--database URL` / `--database=URL` anywhere in the arguments: removed, and its value returned. */
function takeDatabase(argv: string[]): { args: string[]; database: string | undefined } {
  const args: string[] = []
  let database: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string
    if (a === '--database') {
      database = argv[++i]
      if (database === undefined || database === '') throw new UsageError('--database needs a value')
    } else if (a.startsWith('--database=')) database = a.slice('--database='.length)
    else args.push(a)
  }
  return { args, database }
}

/** Whether opening this target will create a new SQLite file (said on stderr, so a wrong directory shows). */
function createsDatabase(target: StorageTarget): string | null {
  if (target.kind !== 'sqlite' || target.file === ':memory:') return null
  const file = resolve(target.file)
  return existsSync(file) ? null : file
}

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer`)
  return n
}

function one(positionals: string[], what: string): string {
  const [value, ...rest] = positionals
  if (!value || rest.length > 0) throw new UsageError(`expected exactly one ${what}`)
  return value
}

type Out = (value: unknown) => void

async function tenants(store: Store, sub: string | undefined, args: string[], out: Out): Promise<void> {
  const clock = systemClock
  if (sub === 'create') {
    const { values } = parseArgs({
      args,
      options: {
        name: { type: 'string' },
        'share-network': { type: 'boolean', default: false },
        'rate-limit': { type: 'string' },
        'monthly-quota': { type: 'string' },
        'allow-duplicate-name': { type: 'boolean', default: false },
      },
      strict: true,
    })
    if (!values.name) throw new UsageError('--name is required')
    const rateLimit = positiveInt(values['rate-limit'], '--rate-limit')
    const monthlyQuota = positiveInt(values['monthly-quota'], '--monthly-quota')
    const created = await createTenant(store, clock, {
      name: values.name,
      shareNetwork: values['share-network'] ?? false,
      uniqueName: !values['allow-duplicate-name'],
      ...(rateLimit ? { rateLimit } : {}),
      ...(monthlyQuota ? { monthlyQuota } : {}),
    })
    out({ tenantId: created.tenantId, keyId: created.keyId, apiKey: created.apiKey })
  } else if (sub === 'list') {
    parseArgs({ args, options: {}, strict: true })
    out({ tenants: await store.tenants.list() })
  } else if (sub === 'delete') {
    const { positionals } = parseArgs({ args, options: {}, allowPositionals: true, strict: true })
    const id = one(positionals, 'TENANT_ID')
    if (!(await store.tenants.delete(id))) throw new TenantAdminError(`tenant ${id} not found`)
    out({ deleted: id })
  } else {
    throw new UsageError(`unknown tenants command: ${sub ?? '(none)'}`)
  }
}

const iso = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? null : new Date(ms).toISOString()

async function keys(store: Store, sub: string | undefined, args: string[], out: Out): Promise<void> {
  const clock = systemClock
  if (sub === 'list') {
    const { values } = parseArgs({ args, options: { tenant: { type: 'string' } }, strict: true })
    if (!values.tenant) throw new UsageError('--tenant is required')
    if (!(await store.tenants.get(values.tenant)))
      throw new TenantAdminError(`tenant ${values.tenant} not found`)
    const list = await store.tenants.listKeys(values.tenant)
    out({
      keys: list.map((k) => ({
        id: k.id,
        kind: k.kind ?? 'secret',
        prefix: k.prefix,
        created: iso(k.createdMs),
        lastUsed: iso(k.lastUsedMs),
        state: k.revokedMs === null ? 'active' : k.replacedBy ? 'rotated' : 'revoked',
      })),
    })
  } else if (sub === 'create') {
    const { values } = parseArgs({
      args,
      options: {
        tenant: { type: 'string' },
        publishable: { type: 'boolean', default: false },
        origin: { type: 'string', multiple: true },
      },
      strict: true,
    })
    if (!values.tenant) throw new UsageError('--tenant is required')
    const origins = (values.origin ?? []).flatMap((o) => o.split(',')).filter((o) => o.trim() !== '')
    if (values.publishable && origins.length === 0)
      throw new UsageError('--publishable needs --origin https://host[,https://host…]')
    if (!values.publishable && origins.length > 0) throw new UsageError('--origin needs --publishable')
    if (!(await store.tenants.get(values.tenant)))
      throw new TenantAdminError(`tenant ${values.tenant} not found`)
    out(await issueKey(store, clock, values.tenant, values.publishable ? { publishable: { origins } } : {}))
  } else if (sub === 'rotate' || sub === 'revoke') {
    const { positionals } = parseArgs({ args, options: {}, allowPositionals: true, strict: true })
    const keyId = one(positionals, 'KEY_ID')
    if (sub === 'rotate') out(await rotateKey(store, clock, keyId))
    else {
      await revokeKey(store, clock, keyId)
      out({ keyId, revoked: true })
    }
  } else {
    throw new UsageError(`unknown keys command: ${sub ?? '(none)'}`)
  }
}

/** Runs one CLI command; returns the process exit code. */
export async function main(
  argv: string[],
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream; stdin?: Input } = {
    stdout: process.stdout,
    stderr: process.stderr,
  },
): Promise<number> {
  const out: Out = (value) => io.stdout.write(`${JSON.stringify(value)}\n`)
  const first = argv[0]
  if (first === '--version' || first === '-v' || first === 'version') {
    io.stdout.write(`${packageVersion()}\n`)
    return 0
  }
  if (first === 'help' || first === '--help' || first === '-h') {
    const topic = argv[1]
    io.stdout.write(`${topic && COMMANDS[topic] ? commandUsage(topic) : USAGE}\n`)
    return 0
  }
  if (!first) {
    io.stderr.write(`${USAGE}\n`)
    return 2
  }
  if (COMMANDS[first] && argv.some((a) => a === '--help' || a === '-h')) {
    io.stdout.write(`${commandUsage(first)}\n`)
    return 0
  }
  let store: Store | undefined
  try {
    if (!COMMANDS[first]) throw new UsageError(`unknown command: ${first}`)
    const { args, database } = takeDatabase(argv)
    const [group = first, sub, ...rest] = args
    // The whole configuration is validated before any command runs, as the server does at start.
    const settings: Settings = loadSettings(
      undefined,
      database === undefined ? {} : { DATABASE_URL: database },
    )
    if (group === 'feeds') return await feeds(sub, rest, settings, out, (line) => io.stderr.write(line))
    if (group === 'backup' || group === 'restore') {
      const backupArgs = sub === undefined ? rest : [sub, ...rest]
      return await backupCommand(group, backupArgs, settings, out, (line) => io.stderr.write(line))
    }
    const created = createsDatabase(settings.storage)
    store = await withStartupLock(settings.storage, () => openStore(settings.storage))
    if (created)
      io.stderr.write(
        `verdict: created a new database: ${created} (${database !== undefined ? '--database' : 'DATABASE_URL, default ./data/verdict.db'}); pass --database or set DATABASE_URL to use another\n`,
      )
    if (group === 'traps') {
      return await traps(sub, rest, store, settings.storage, settings.secret, out, (line) =>
        io.stderr.write(line),
      )
    }
    if (group === 'audit') {
      const hasher = new Hasher(await resolveSecret(store, settings.storage, settings.secret))
      return await auditCommand(sub, rest, store, hasher, out, (line) => io.stderr.write(line))
    }
    if (group === 'replay') {
      // A rule comparing a hashed attribute with a string is compiled with the tenant's keyed hash;
      // without a secret the other events still replay.
      const secret = await resolveSecret(store, settings.storage, settings.secret).catch((err) => {
        if (err instanceof SecretError) return undefined
        throw err
      })
      const hasher = secret === undefined ? undefined : new Hasher(secret)
      return await replayCommand(sub === undefined ? rest : [sub, ...rest], store, hasher, out)
    }
    if (group === 'report') return await reportCommand(sub, rest, store, (text) => io.stdout.write(text))
    if (group === 'users') {
      await users(store, sub, rest, out, io.stdin ?? process.stdin, (text) => io.stderr.write(text))
      return 0
    }
    if (group === 'tenants') await tenants(store, sub, rest, out)
    else await keys(store, sub, rest, out)
    return 0
  } catch (err) {
    const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    io.stderr.write(`${JSON.stringify({ error: (err as Error).message })}\n`)
    if (usage) io.stderr.write(`${hint(first)}\n`)
    return usage ? 2 : 1
  } finally {
    await store?.close()
  }
}
