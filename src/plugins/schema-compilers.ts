import { AjvCompiler } from '@fastify/ajv-compiler'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>
type BuildSerializer = NonNullable<CompilersFactory['buildSerializer']>

/**
 * Schema compilers that one process shares between the apps it builds: each route schema is compiled
 * once, not once per app. Fastify's own compilers, with their options, behind a cache keyed by the schema
 * object (the route schemas are module constants) and by the shared schemas and options. The server
 * builds one app and never needs this; the test harness builds hundreds, and compiling every route's
 * validator and serializer was most of the cost of each (README, "Test it").
 */
export function sharedSchemaCompilers(): CompilersFactory {
  const buildValidator = AjvCompiler()
  const selectSerializer = SerializerSelector()
  const serializers = new Map<string, WeakMap<object, unknown>>()
  const buildSerializer: BuildSerializer = (externalSchemas, options) => {
    const key = JSON.stringify(externalSchemas) + JSON.stringify(options)
    const cache = serializers.get(key) ?? new WeakMap<object, unknown>()
    serializers.set(key, cache)
    const compile = selectSerializer(externalSchemas, options)
    return (route) => {
      const schema = route.schema as object
      const known = cache.get(schema) as ReturnType<typeof compile> | undefined
      if (known) return known
      const fn = compile(route)
      cache.set(schema, fn)
      return fn
    }
  }
  return { buildValidator, buildSerializer }
}
