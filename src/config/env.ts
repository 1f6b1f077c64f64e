import type { TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { type EnvAnnotations, EnvSchema, type EnvValues, envVar } from './schema.js'

/** The environment as strings: the process environment in production, a plain object in tests. */
export type Env = Record<string, string | undefined>

type VarSchema = TSchema &
  EnvAnnotations & {
    type?: string
    enum?: readonly string[]
    minimum?: number
    maximum?: number
    default?: unknown
  }

const TRUE = new Set(['1', 'true', 'yes', 'on'])
const FALSE = new Set(['0', 'false', 'no', 'off'])

/**
 * A raw string as the schema's type: numbers, on/off words, lower-cased choices, lists. `undefined`
 * means unset (absent, or blank where blank means nothing). A string that does not convert is returned
 * as it is, so the schema check below refuses it.
 */
function convert(schema: VarSchema, raw: string | undefined): unknown {
  if (raw === undefined) return undefined
  if (schema.verbatim) return raw
  if (schema.type === 'array') {
    const parts = schema.separator === ',' ? raw.split(',').map((s) => s.trim()) : raw.split(/\s+/)
    return parts.filter(Boolean)
  }
  const text = raw.trim()
  if (text === '') return undefined
  if (schema.type === 'integer') {
    const n = Number(text)
    return Number.isSafeInteger(n) ? n : text
  }
  if (schema.type === 'boolean') {
    const word = text.toLowerCase()
    return TRUE.has(word) ? true : FALSE.has(word) ? false : text
  }
  if (schema.enum) return text.toLowerCase()
  return text
}

/** What a variable accepts, in words, for the error message. */
function allowed(schema: VarSchema): string {
  if (schema.allowed) return schema.allowed
  if (schema.type === 'integer') {
    return schema.maximum === undefined
      ? `an integer >= ${schema.minimum}`
      : `an integer from ${schema.minimum} to ${schema.maximum}`
  }
  if (schema.type === 'boolean')
    return `one of ${[...TRUE].join(', ')} (on) or ${[...FALSE].join(', ')} (off)`
  if (schema.enum) return `one of ${schema.enum.join(', ')}`
  if (schema.type === 'array') return 'a list of non-empty entries'
  return 'a non-empty string'
}

/**
 * Reads every variable of the schema from `env`, applies the defaults and checks the result against
 * the schema. Each problem names the variable, what it allows and what it got.
 */
export function readEnv(env: Env): { values: EnvValues; problems: string[] } {
  const values: Record<string, unknown> = {}
  for (const name of Object.keys(EnvSchema.properties)) {
    const schema = envVar(name) as VarSchema
    const value = convert(schema, env[name])
    if (value !== undefined) values[name] = value
    else if (schema.default !== undefined) values[name] = structuredClone(schema.default)
  }
  const bad = new Set<string>()
  for (const error of Value.Errors(EnvSchema, values)) {
    const name = error.instancePath.split('/')[1]
    if (name) bad.add(name)
  }
  const problems = [...bad].map(
    (name) => `${name} must be ${allowed(envVar(name) as VarSchema)}, got "${env[name]}"`,
  )
  return { values: values as EnvValues, problems }
}
