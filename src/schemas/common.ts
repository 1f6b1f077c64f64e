import { type Static, type TSchema, Type } from '@fastify/type-provider-typebox'
import { ERROR_CODES } from '../errors.js'

/** Every error answer: the message, its closed code and the id the server log files it under. */
export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'human-readable message; names the field at fault' }),
    code: StrEnum(ERROR_CODES, 'machine-readable error code; branch on this, not on the message'),
    request_id: Type.String({ description: 'id of this request in the server log; quote it when reporting' }),
  },
  { title: 'ErrorBody', description: 'Every error answer' },
)

/** A value that may be JSON null. */
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])

/**
 * A scalar that may be JSON null, as OpenAPI 3.0 writes it (`nullable: true`). For answers on the
 * scoring path: the serialiser handles it inline, where a union makes it validate each branch.
 */
export const NullableScalar = <T extends TSchema>(t: T) =>
  Type.Unsafe<Static<T> | null>({ ...t, nullable: true })

/** A query or path value the interface types as a string of digits. */
export const Digits = (description: string) => Type.String({ pattern: '^\\d+$', maxLength: 12, description })

/** Declares that a route takes no query parameters at all, so unknown ones are rejected. */
export const NoQuery = Type.Object({}, { additionalProperties: false })

/** Standard error responses for a route, keyed by status. */
export function errors(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {}
  for (const s of statuses) out[s] = ErrorBody
  return out
}

/** Strict object: unknown properties are rejected with 400. */
export function Strict<T extends Record<string, TSchema>>(
  props: T,
  options: { description?: string; title?: string; examples?: unknown[] } = {},
) {
  return Type.Object(props, { additionalProperties: false, ...options })
}

/** A string enum typed as its union, documented with `type: string` for OpenAPI. */
export function StrEnum<T extends string>(values: readonly T[], description?: string, title?: string) {
  return Type.Unsafe<T>({
    type: 'string',
    enum: [...values],
    ...(description ? { description } : {}),
    ...(title ? { title } : {}),
  })
}

/**
 * A closed enum in an answer read back from storage: documented closed (clients switch on it), typed
 * as the stored string, since rows written by an older version are shown as they are.
 */
export const Stored = (t: TSchema) => Type.Unsafe<string>(t)

/** The three verdicts, one named schema wherever a verdict is shown or filtered on. */
export const Verdict = StrEnum(['allow', 'review', 'block'] as const, 'allow, review or block', 'Verdict')
