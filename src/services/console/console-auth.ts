import { randomBytes, randomUUID, scrypt, timingSafeEqual } from 'node:crypto'
import { ApiError } from '../../errors.js'
import type { ConsoleUserWithHash } from '../../store/access/console.js'
import type { Tenant } from '../../store/access/tenants.js'
import type { Store } from '../../store/index.js'
import type { Clock } from '../../util/clock.js'
import { type Hasher, randomToken, safeEqual, sha256Hex } from '../../util/secrets.js'
import type { AuthContext } from '../access/auth.js'
import { clientBucket, type Limiter } from '../runtime/rate-limiter.js'

/**
 * Console users and their sessions. Passwords are hashed with scrypt; a session id is a random token
 * the browser holds in an httpOnly cookie and the database holds only as a SHA-256. The session's CSRF
 * token is an HMAC of its id under the server secret: nothing to store, and a reloaded page gets it
 * back from GET /console/api/session. The page sends it in a header on every state-changing request.
 */

export const SESSION_COOKIE = 'verdict_session'
/**
 * The cookie's name over TLS: a `__Host-` cookie must be Secure, Path=/ and without Domain, so no
 * sibling subdomain can set or shadow it (a planted plain-named cookie is not read over TLS).
 */
export const sessionCookieName = (secure: boolean) => (secure ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE)
export const CSRF_HEADER = 'x-csrf-token'
/** A session not used for this long is over. */
export const SESSION_IDLE_MS = 30 * 60_000
/** Nor does any session outlive this, however busy. */
export const SESSION_MAX_MS = 12 * 3600_000
/** last_ms is written at most this often, not on every request. */
const TOUCH_EVERY_MS = 60_000
/** Failed sign-ins per minute per client address, and per email address. */
export const SIGN_IN_FAILURES_PER_IP = 10
export const SIGN_IN_FAILURES_PER_EMAIL = 5
/** (email, address) pairs remembered as having signed in, per process. */
const KNOWN_ADDRESSES_MAX = 10_000
/** Password checks (scrypt) running at once in one process; a sign-in beyond answers 429. */
export const MAX_PASSWORD_CHECKS = 2
export const PASSWORD_MIN = 12
const PASSWORD_MAX = 1024

/** scrypt's cost parameters; stored in every hash, so the cost can rise without breaking old hashes. */
export interface PasswordCost {
  N: number
  r: number
  p: number
}

// N = 2^17, r = 8, p = 1: the OWASP minimum for scrypt, 128 MiB and a few hundred milliseconds per
// hash (MAX_PASSWORD_CHECKS bounds how many run at once). Only the test harness passes a lower cost,
// as Django's test settings do, so hundreds of sign-ins do not cost minutes.
export const PASSWORD_COST: PasswordCost = { N: 131072, r: 8, p: 1 }
/** Room above the 128 MiB block of N = 2^17, r = 8. */
const MAXMEM = 192 * 1024 * 1024
const KEY_LEN = 32

/** An error the CLI prints as it is and HTTP answers with `code`. */
export class ConsoleUserError extends Error {
  constructor(
    readonly code: 'conflict' | 'bad_request' | 'not_found',
    message: string,
  ) {
    super(message)
  }
}

function scryptAsync(
  password: string,
  salt: Buffer,
  o: { N: number; r: number; p: number },
): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_LEN, { ...o, maxmem: MAXMEM }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  )
}

/** `scrypt$N$r$p$salt$key` (base64url), so the cost can rise later without breaking stored hashes. */
export async function hashPassword(password: string, cost: PasswordCost = PASSWORD_COST): Promise<string> {
  const salt = randomBytes(16)
  const key = await scryptAsync(password, salt, cost)
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$')
}

/** Whether a stored hash was made with other parameters than today's (rehashed on the next sign-in). */
export function needsRehash(stored: string, cost: PasswordCost = PASSWORD_COST): boolean {
  const [kind, n, r, p] = stored.split('$')
  return kind !== 'scrypt' || Number(n) !== cost.N || Number(r) !== cost.r || Number(p) !== cost.p
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, key] = stored.split('$')
  if (kind !== 'scrypt' || !salt || !key) return false
  const expected = Buffer.from(key, 'base64url')
  const got = await scryptAsync(password, Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  })
  return got.length === expected.length && timingSafeEqual(got, expected)
}

/** Compared on every sign-in of an unknown email, so timing does not tell which emails exist. */
const dummyHashes = new Map<number, Promise<string>>()
function dummyHash(cost: PasswordCost): Promise<string> {
  const key = cost.N * 1e4 + cost.r * 100 + cost.p
  const known = dummyHashes.get(key)
  if (known) return known
  const hash = hashPassword(randomToken(24), cost)
  dummyHashes.set(key, hash)
  return hash
}

export const normaliseEmail = (email: string) => email.trim().toLowerCase()

export function checkNewUser(email: string, password: string): void {
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254)
    throw new ConsoleUserError('bad_request', 'email is not a valid email address')
  if (password.length < PASSWORD_MIN)
    throw new ConsoleUserError('bad_request', `password must be at least ${PASSWORD_MIN} characters`)
  if (password.length > PASSWORD_MAX)
    throw new ConsoleUserError('bad_request', `password must be at most ${PASSWORD_MAX} characters`)
}

export async function createConsoleUser(
  store: Store,
  clock: Clock,
  input: { tenantId: string; email: string; password: string },
  cost: PasswordCost = PASSWORD_COST,
): Promise<{ userId: string; tenantId: string; email: string }> {
  const email = normaliseEmail(input.email)
  checkNewUser(email, input.password)
  if (!(await store.tenants.get(input.tenantId)))
    throw new ConsoleUserError('not_found', `tenant ${input.tenantId} not found`)
  const user = { id: `usr_${randomUUID()}`, tenantId: input.tenantId, email, createdMs: clock.now() }
  if (!(await store.console.createUser(user, await hashPassword(input.password, cost))))
    throw new ConsoleUserError('conflict', `a console user with email ${email} already exists in this tenant`)
  return { userId: user.id, tenantId: user.tenantId, email }
}

const tooMany = (retryAfterSeconds: number) =>
  new ApiError('rate_limited', 'too many failed sign-in attempts; retry later', {
    'Retry-After': String(Math.max(1, retryAfterSeconds)),
  })

/** One sign-in attempt, counted before its password check. */
export interface SignInAttempt {
  /** The password was right: the attempt is given back, so only failures use up the budget. */
  succeeded(): Promise<void>
  /** The check is over (always called): frees the email's and the process's check slot. */
  end(): void
}

/**
 * Sign-in attempts per client address and per email, in the service's limiter: with Redis they are
 * counted across every node, so more nodes do not mean more password guesses. The email is keyed by an
 * HMAC, never written as it is. An attempt is counted atomically before its password is checked and
 * given back when it succeeds, so attempts sent at once cannot all pass a check-then-count gap. In one
 * process, one check per email runs at a time and at most MAX_PASSWORD_CHECKS at all (429 beyond):
 * scrypt costs tens of MiB and milliseconds each, and sign-in is reachable without a credential.
 */
export class SignInThrottle {
  /** Email buckets with a password check in flight in this process. */
  private readonly checking = new Set<string>()
  private running = 0
  /** Addresses that signed in successfully for an email, oldest first (a Map keeps insertion order). */
  private readonly known = new Map<string, true>()

  constructor(
    private readonly limiter: Limiter,
    private readonly hasher: Hasher,
    private readonly maxChecks = MAX_PASSWORD_CHECKS,
  ) {}

  private buckets(ip: string, email: string): [string, string] {
    return [
      `sign-in:ip:${clientBucket(ip)}`,
      `sign-in:email:${this.hasher.mac('console-sign-in', email).toString('base64url')}`,
    ]
  }

  /** An (email, address) pair that signed in before, keyed by an HMAC (no email or IP kept as is). */
  private pair(ip: string, email: string): string {
    return this.hasher.mac('console-known-address', `${email}\u0000${clientBucket(ip)}`).toString('base64url')
  }

  private remember(pair: string): void {
    this.known.delete(pair)
    this.known.set(pair, true)
    if (this.known.size > KNOWN_ADDRESSES_MAX) this.known.delete(this.known.keys().next().value as string)
  }

  /** Counts one attempt, or throws 429 (budget spent, a check of this email running, or too many). */
  async begin(ip: string, email: string, nowMs: number): Promise<SignInAttempt> {
    const [byIp, emailBucket] = this.buckets(ip, email)
    // An address this email signed in from before has a budget of its own: failures from elsewhere
    // cannot lock the user out of it (unknown addresses keep sharing the email's budget).
    const pair = this.pair(ip, email)
    const byEmail = this.known.has(pair) ? `sign-in:known:${pair}` : emailBucket
    if (this.running >= this.maxChecks) {
      throw new ApiError('rate_limited', 'too many sign-ins are being checked at once; retry in a moment', {
        'Retry-After': '1',
      })
    }
    if (this.checking.has(emailBucket)) throw tooMany(1)
    // Both slots are taken before the first await, so concurrent attempts see them.
    this.running++
    this.checking.add(emailBucket)
    let open = true
    const end = () => {
      if (!open) return
      open = false
      this.running--
      this.checking.delete(emailBucket)
    }
    try {
      const a = await this.limiter.hit(byIp, SIGN_IN_FAILURES_PER_IP, nowMs)
      if (!a.allowed) throw tooMany(a.retryAfterSeconds)
      const b = await this.limiter.hit(byEmail, SIGN_IN_FAILURES_PER_EMAIL, nowMs)
      if (!b.allowed) {
        // No password is checked: the address's attempt is not spent either.
        await this.limiter.refund(byIp, SIGN_IN_FAILURES_PER_IP, nowMs)
        throw tooMany(b.retryAfterSeconds)
      }
    } catch (err) {
      end()
      throw err
    }
    return {
      succeeded: async () => {
        this.remember(pair)
        await Promise.all([
          this.limiter.refund(byIp, SIGN_IN_FAILURES_PER_IP, nowMs),
          this.limiter.refund(byEmail, SIGN_IN_FAILURES_PER_EMAIL, nowMs),
        ])
      },
      end,
    }
  }
}

export interface NewSession {
  /** The raw session id: goes into the cookie, never into the database. */
  sessionId: string
  csrfToken: string
  userId: string
  tenantId: string
  email: string
  expiresMs: number
}

const hashSessionId = (id: string) => sha256Hex(`session\u0000${id}`)
/** The CSRF token of a session: an HMAC of its raw id, so only the server can make it. */
export const csrfToken = (hasher: Hasher, sessionId: string) =>
  hasher.mac('console-csrf', sessionId).toString('base64url')

export async function signIn(
  deps: {
    store: Store
    clock: Clock
    hasher: Hasher
    signInThrottle: SignInThrottle
    passwordCost?: PasswordCost
  },
  input: { email: string; password: string; ip: string; tenant?: string },
): Promise<NewSession> {
  const email = normaliseEmail(input.email)
  const now = deps.clock.now()
  const attempt = await deps.signInThrottle.begin(input.ip, email, now)
  let user: ConsoleUserWithHash
  try {
    // An email may be a console user of several tenants (each tenant's users are its own): the password
    // picks the account, and `tenant` picks one when the same password opens several.
    const candidates = (await deps.store.console.usersByEmail(email)).filter(
      (u) => input.tenant === undefined || u.tenantId === input.tenant,
    )
    const cost = deps.passwordCost ?? PASSWORD_COST
    const password = input.password.slice(0, PASSWORD_MAX)
    const matched: ConsoleUserWithHash[] = []
    // An unknown email still costs one check, so timing does not tell whether it exists.
    if (candidates.length === 0) await verifyPassword(password, await dummyHash(cost))
    for (const u of candidates) if (await verifyPassword(password, u.passwordHash)) matched.push(u)
    if (matched.length === 0) throw new ApiError('unauthorized', 'wrong email or password')
    if (matched.length > 1)
      throw new ApiError(
        'conflict',
        `this email and password open several tenants; sign in with tenant set to one of: ${matched.map((u) => u.tenantId).join(', ')}`,
      )
    user = matched[0]!
    await attempt.succeeded()
    // The password is known only now: a hash of another cost is replaced by the one this server uses.
    if (needsRehash(user.passwordHash, cost))
      await deps.store.console.setPasswordHash(user.id, await hashPassword(password, cost))
  } finally {
    attempt.end()
  }
  // Old sessions go here rather than in a job: sign-ins are rare, and each removes what expired.
  await deps.store.console.expireSessions(now - SESSION_IDLE_MS, now - SESSION_MAX_MS)
  const sessionId = randomToken(43)
  await deps.store.console.createSession({
    idHash: hashSessionId(sessionId),
    userId: user.id,
    tenantId: user.tenantId,
    createdMs: now,
    lastMs: now,
  })
  return {
    sessionId,
    csrfToken: csrfToken(deps.hasher, sessionId),
    userId: user.id,
    tenantId: user.tenantId,
    email: user.email,
    expiresMs: now + SESSION_MAX_MS,
  }
}

export interface ConsoleAuth extends AuthContext {
  console: {
    userId: string
    email: string
    sessionHash: string
    csrfToken: string
    expiresMs: number
    idleMs: number
  }
}

/** The raw value of the session cookie in a Cookie header, if any (its `__Host-` name over TLS). */
export function sessionCookie(header: string | undefined, secure: boolean): string | undefined {
  if (!header) return undefined
  const name = sessionCookieName(secure)
  for (const part of header.split(';')) {
    const i = part.indexOf('=')
    if (i > 0 && part.slice(0, i).trim() === name) {
      const v = part.slice(i + 1).trim()
      return v === '' ? undefined : v
    }
  }
  return undefined
}

/**
 * The request's credential when it carries a session cookie: the session's tenant as an AuthContext,
 * or a 401 when the session is unknown, signed out or expired (idle or absolute). A state-changing
 * request must also carry the session's CSRF token (403 without it).
 */
export async function sessionAuth(
  deps: { store: Store; clock: Clock; hasher: Hasher },
  sessionId: string,
  csrf: string | undefined,
  unsafe: boolean,
): Promise<ConsoleAuth> {
  const expired = () => new ApiError('unauthorized', 'console session expired or signed out; sign in again')
  if (sessionId.length > 200) throw expired()
  const idHash = hashSessionId(sessionId)
  const s = await deps.store.console.session(idHash)
  const now = deps.clock.now()
  if (!s || !safeEqual(s.idHash, idHash)) throw expired()
  if (now - s.lastMs >= SESSION_IDLE_MS || now - s.createdMs >= SESSION_MAX_MS) {
    await deps.store.console.deleteSession(idHash)
    throw expired()
  }
  if (unsafe && (csrf === undefined || !safeEqual(csrf, csrfToken(deps.hasher, sessionId))))
    throw new ApiError('forbidden', `missing or wrong ${CSRF_HEADER} header for this console session`)
  const tenant: Tenant | undefined = await deps.store.tenants.get(s.tenantId)
  if (!tenant) throw expired()
  if (now - s.lastMs >= TOUCH_EVERY_MS) await deps.store.console.touchSession(idHash, now)
  return {
    tenant,
    keyId: `console:${s.userId}`,
    publishable: false,
    origins: [],
    console: {
      userId: s.userId,
      email: s.email,
      sessionHash: idHash,
      csrfToken: csrfToken(deps.hasher, sessionId),
      expiresMs: Math.min(s.createdMs + SESSION_MAX_MS, now + SESSION_IDLE_MS),
      idleMs: SESSION_IDLE_MS,
    },
  }
}

export async function signOut(store: Store, auth: ConsoleAuth): Promise<void> {
  await store.console.deleteSession(auth.console.sessionHash)
}

/** The Set-Cookie value for a new session, or (without `sessionId`) the one that clears it. */
export function sessionSetCookie(sessionId: string | null, secure: boolean): string {
  const attrs = ['Path=/', 'HttpOnly', 'SameSite=Strict', ...(secure ? ['Secure'] : [])]
  const name = sessionCookieName(secure)
  if (sessionId === null) return [`${name}=`, 'Max-Age=0', ...attrs].join('; ')
  return [`${name}=${sessionId}`, `Max-Age=${SESSION_MAX_MS / 1000}`, ...attrs].join('; ')
}

export const isConsoleAuth = (auth: AuthContext | null): auth is ConsoleAuth =>
  auth !== null && 'console' in auth
