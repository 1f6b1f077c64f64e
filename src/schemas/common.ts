import { type TSchema, Type } from '@fastify/type-provider-typebox'

export const ErrorBody = Type.Object({ error: Type.String() }, { description: 'Error' })

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
export function Strict<T extends Record<string, TSchema>>(props: T, options: { description?: string } = {}) {
  return Type.Object(props, { additionalProperties: false, ...options })
}

/** A string enum typed as its union, documented with `type: string` for OpenAPI. */
export function StrEnum<T extends string>(values: readonly T[], description?: string) {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description ? { description } : {}) })
}
