import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify'
import type { Explainer } from '../ai/index.js'
import { ApiError } from '../errors.js'
import type { Intel } from '../intel/index.js'
import type { ClusterStatus } from '../services/cluster.js'
import type { Deps, TenantCtx } from '../services/context.js'
import type { GroupWriter } from '../services/group-writer.js'
import type { AsnRates } from '../services/network.js'
import type { TrapRecorder } from '../services/traps.js'

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>

export interface RegisteredRoute {
  method: string
  url: string
  auth: 'key' | 'optional' | 'none'
}

export interface RouteDeps extends Deps {
  version: string
  intel: Intel
  writer: GroupWriter
  asnRates: AsnRates
  explainer: Explainer
  traps: TrapRecorder
  cluster: ClusterStatus
}

/** The tenant context of an authenticated request. */
export function tenantCtx(deps: Deps, request: FastifyRequest): TenantCtx {
  if (!request.auth) throw new ApiError('unauthorized', 'missing API key')
  return { ...deps, tenant: request.auth.tenant }
}
