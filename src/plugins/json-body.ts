import type { FastifyInstance, FastifyRequest } from 'fastify'
import { badRequest } from '../errors.js'

/**
 * Small body limits of the routes anyone can call without a credential (docs/security.md, Hardening
 * II): each is many times the largest valid body (sign-in: a 254-character email and a 1024-character
 * password in UTF-8 come to about 3.4 KB; the library's beacon is about 390 bytes; /v1/check about 400).
 */
export const SIGN_IN_BODY_LIMIT = 4096
export const BEACON_BODY_LIMIT = 8192
export const CHECK_BODY_LIMIT = 4096

/** A route's small limit, never above the deployment's own body limit when that is smaller. */
export const smallBodyLimit = (app: FastifyInstance, limit: number): number =>
  Math.min(limit, app.initialConfig.bodyLimit ?? limit)

/** Deeper than any request schema (the deepest is four levels): nothing valid comes near it. */
export const MAX_JSON_DEPTH = 32

interface Frame {
  path: string
  /** Object keys seen so far; null for an array. */
  keys: Set<string> | null
  /** The next array element's index. */
  index: number
  /** The object is `constructor`'s value (a `prototype` key in it is refused). */
  underConstructor: boolean
}

const member = (path: string, key: string) => `${path}.${key}`

/** PostgreSQL text cannot hold U+0000, so no string may carry it on either engine (docs/api-errors.md). */
const nulRefused = (path: string) => badRequest(`${path} must not contain the NUL character (U+0000)`)

/** The path of the value about to start in `top` (the body itself when there is no container). */
function valuePath(top: Frame | undefined, pendingKey: string | null): string {
  if (!top) return 'body'
  return top.keys === null ? `${top.path}[${top.index}]` : member(top.path, pendingKey ?? '')
}

/**
 * Checks the shape of a JSON text in one pass before it is parsed, naming the field at fault: a key
 * sent twice in one object (JSON.parse would keep the last copy silently), `__proto__` and
 * `constructor.prototype` keys (prototype poisoning), a NUL character in any string, and nesting past
 * MAX_JSON_DEPTH. Iterative, so any nesting costs no stack. Syntax errors are left to JSON.parse.
 */
export function checkJsonShape(text: string): void {
  const stack: Frame[] = []
  let pendingKey: string | null = null
  const n = text.length
  // The next backslash at or after the current position, remembered across strings: searching afresh
  // from every string made a body of many strings and no backslash cost O(n²) (issue 26).
  let slash = -2
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22 /* " */) {
      const start = i
      let nul = false
      let escaped = false
      // Jump to the closing quote; only a string with a backslash is walked escape by escape.
      let close = text.indexOf('"', i + 1)
      if (slash !== -1 && slash <= i) slash = text.indexOf('\\', i + 1)
      while (slash !== -1 && close !== -1 && slash < close) {
        escaped = true
        if (text.startsWith('u0000', slash + 1)) nul = true
        if (close === slash + 1) close = text.indexOf('"', close + 1)
        slash = text.indexOf('\\', slash + 2)
      }
      if (close === -1) return
      i = close
      const top = stack[stack.length - 1]
      if (!top || top.keys === null || pendingKey !== null) {
        if (nul) throw nulRefused(valuePath(top, pendingKey))
        continue
      }
      // A string in an object not preceded by a key is a key (its ':' follows); decode its escapes.
      let key = text.slice(start + 1, i)
      if (escaped) {
        try {
          key = JSON.parse(text.slice(start, i + 1)) as string
        } catch {
          return
        }
      }
      if (nul) throw nulRefused(member(top.path, key))
      if (key === '__proto__' || (key === 'prototype' && top.underConstructor))
        throw badRequest(`${member(top.path, key)} is not an allowed field`)
      if (top.keys.has(key)) throw badRequest(`${member(top.path, key)} is sent more than once`)
      top.keys.add(key)
      pendingKey = key
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const top = stack[stack.length - 1]
      const path = valuePath(top, pendingKey)
      if (stack.length >= MAX_JSON_DEPTH)
        throw badRequest(`${path} is nested more than ${MAX_JSON_DEPTH} levels deep`)
      stack.push({
        path,
        keys: c === 0x7b ? new Set() : null,
        index: 0,
        underConstructor: c === 0x7b && top?.keys !== null && pendingKey === 'constructor',
      })
      pendingKey = null
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop()
      pendingKey = null
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1]
      if (top && top.keys === null) top.index++
      pendingKey = null
    }
  }
}

/** Query and path values with a NUL character are refused like body strings, naming the parameter. */
export function registerNoNul(app: FastifyInstance): void {
  // Callback style: no promise per request on the scoring path.
  app.addHook('preValidation', (request, _reply, done) => {
    for (const [context, values] of [
      ['params', request.params],
      ['query', request.query],
    ] as const) {
      if (!values || typeof values !== 'object') continue
      for (const [k, v] of Object.entries(values as Record<string, unknown>)) {
        const texts = Array.isArray(v) ? v : [v]
        if (k.includes('\u0000') || texts.some((t) => typeof t === 'string' && t.includes('\u0000')))
          return done(nulRefused(`${context}.${k}`))
      }
    }
    done()
  })
}

/** checkJsonShape, then JSON.parse: the one way a JSON body is read, whatever its content type. */
function parseJson(
  _request: FastifyRequest,
  body: string | Buffer,
  done: (err: Error | null, body?: unknown) => void,
): void {
  // A leading byte-order mark is allowed (RFC 8259 lets parsers ignore it), as Fastify's parser did.
  const text = (body as string).replace(/^\ufeff/, '')
  if (text.trim() === '') {
    done(badRequest('body is empty; send a JSON object'), undefined)
    return
  }
  try {
    checkJsonShape(text)
  } catch (err) {
    done(err as Error, undefined)
    return
  }
  try {
    done(null, JSON.parse(text))
  } catch {
    done(badRequest('body is not valid JSON'), undefined)
  }
}

/**
 * The JSON body parser. Replaces Fastify's, whose answers to a `__proto__` key ("Body is not valid
 * JSON") named no field and which kept the last of duplicate keys.
 */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJson)
}

/**
 * Reads a text/plain body as JSON, in the plugin scope it is called in only (the beacon route): a
 * browser sends text/plain cross-origin without a CORS preflight. Same checks and body limit as JSON.
 */
export function registerPlainTextJson(scope: FastifyInstance): void {
  scope.addContentTypeParser('text/plain', { parseAs: 'string' }, parseJson)
}
