import { parseArgs } from 'node:util'
import { ConsoleUserError, createConsoleUser } from '../services/console/console-auth.js'
import type { Store } from '../store/index.js'
import { systemClock } from '../util/clock.js'
import { UsageError } from './errors.js'

/** Standard input as the CLI sees it: a terminal, or a pipe (`--password-stdin`). */
export type Input = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown }

/** All of a piped standard input, without its final line break. */
async function readAll(input: Input): Promise<string> {
  let text = ''
  for await (const chunk of input) text += chunk.toString()
  return text.replace(/\r?\n$/, '')
}

/** Asks on the terminal without echoing what is typed. */
function askHidden(input: Input, prompt: (text: string) => void, question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    // Echo goes off before the question appears: nothing typed in answer to it is ever shown.
    input.setRawMode?.(true)
    prompt(question)
    input.resume()
    let value = ''
    const done = (err?: Error) => {
      input.setRawMode?.(false)
      input.pause()
      input.removeListener('data', onData)
      prompt('\n')
      if (err) reject(err)
      else resolve(value)
    }
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString()) {
        if (ch === '\r' || ch === '\n') return done()
        if (ch === '\u0003') return done(new UsageError('cancelled'))
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1)
        else value += ch
      }
    }
    input.on('data', onData)
  })
}

async function readPassword(
  input: Input,
  fromStdin: boolean,
  prompt: (text: string) => void,
): Promise<string> {
  if (fromStdin) return readAll(input)
  if (!input.isTTY)
    throw new UsageError('no terminal to ask for the password: pass --password-stdin and pipe it')
  const first = await askHidden(input, prompt, 'Password: ')
  const again = await askHidden(input, prompt, 'Repeat password: ')
  if (first !== again) throw new UsageError('the two passwords differ')
  return first
}

/** `users create|list|delete`: console users of a tenant. */
export async function users(
  store: Store,
  sub: string | undefined,
  args: string[],
  out: (value: unknown) => void,
  input: Input,
  prompt: (text: string) => void,
): Promise<void> {
  if (sub === 'create') {
    const { values } = parseArgs({
      args,
      options: {
        tenant: { type: 'string' },
        email: { type: 'string' },
        'password-stdin': { type: 'boolean', default: false },
      },
      strict: true,
    })
    if (!values.tenant) throw new UsageError('--tenant is required')
    if (!values.email) throw new UsageError('--email is required')
    const password = await readPassword(input, values['password-stdin'] ?? false, prompt)
    try {
      out(
        await createConsoleUser(store, systemClock, {
          tenantId: values.tenant,
          email: values.email,
          password,
        }),
      )
    } catch (err) {
      // A taken email, an unknown tenant or a short password: a plain message, not a stack.
      if (err instanceof ConsoleUserError) throw new Error(err.message)
      throw err
    }
  } else if (sub === 'list') {
    const { values } = parseArgs({ args, options: { tenant: { type: 'string' } }, strict: true })
    const list = await store.console.listUsers(values.tenant)
    out({
      users: list.map((u) => ({
        userId: u.id,
        tenantId: u.tenantId,
        email: u.email,
        createdMs: u.createdMs,
      })),
    })
  } else if (sub === 'delete') {
    const { positionals, values } = parseArgs({
      args,
      options: { tenant: { type: 'string' } },
      allowPositionals: true,
      strict: true,
    })
    const [who, ...rest] = positionals
    if (!who || rest.length > 0) throw new UsageError('expected exactly one USER_ID or EMAIL')
    const key = who.includes('@') ? who.trim().toLowerCase() : who
    // An email may be a user of several tenants: deleting by email needs --tenant when it is.
    if (key.includes('@') && values.tenant === undefined) {
      const tenants = (await store.console.usersByEmail(key)).map((u) => u.tenantId)
      if (tenants.length > 1)
        throw new UsageError(
          `${key} is a console user of ${tenants.length} tenants; add --tenant (${tenants.join(', ')})`,
        )
    }
    if ((await store.console.deleteUser(key, values.tenant)) === 0)
      throw new Error(`console user ${who} not found`)
    out({ deleted: who })
  } else {
    throw new UsageError(`unknown users command: ${sub ?? '(none)'}`)
  }
}
