import { tenantContext } from '../context.js'
import { ApiError } from '../errors.js'
import { SIGN_IN_BODY_LIMIT, smallBodyLimit } from '../plugins/json-body.js'
import { errors, NoQuery } from '../schemas/common.js'
import {
  Defaults,
  EventDetail,
  EventParams,
  IssuedKey,
  KeyList,
  KeyParams,
  NewKeyBody,
  NewUser,
  NewUserBody,
  Overview,
  OverviewQuery,
  ReviewQuery,
  ReviewQueue,
  Revoked,
  SessionView,
  SignedOut,
  SignInBody,
  UserList,
} from '../schemas/console.js'
import {
  addTenantUser,
  createTenantKey,
  eventDetail,
  overview,
  reviewQueue,
  revokeTenantKey,
  rotateTenantKey,
  scoringDefaults,
  tenantKeys,
  tenantUsers,
} from '../services/console/console.js'
import {
  type ConsoleAuth,
  isConsoleAuth,
  sessionSetCookie,
  signIn,
  signOut,
} from '../services/console/console-auth.js'
import { digits } from '../util/query.js'
import type { App } from './types.js'

const consoleAuth = (auth: unknown): ConsoleAuth => {
  if (!isConsoleAuth(auth as ConsoleAuth | null)) throw new ApiError('unauthorized', 'no console session')
  return auth as ConsoleAuth
}

/**
 * The console's own routes under /console/api. They take the session cookie only (auth 'console',
 * the default for this prefix; sign-in is the one exception). Everything else the console shows comes
 * from the /v1 routes, which accept the same session in place of a key.
 */
export function registerConsoleRoutes(app: App): void {
  const tags = ['console']
  app.post(
    '/console/api/sign-in',
    {
      config: { auth: 'none' },
      bodyLimit: smallBodyLimit(app, SIGN_IN_BODY_LIMIT),
      schema: {
        summary: 'Sign in to the console: sets the session cookie',
        tags,
        querystring: NoQuery,
        body: SignInBody,
        response: { 200: SessionView, ...errors(400, 401, 429) },
      },
    },
    async (request, reply) => {
      const s = await signIn(request.server.services, { ...request.body, ip: request.ip })
      const tenant = await request.server.services.store.tenants.get(s.tenantId)
      reply.header('set-cookie', sessionSetCookie(s.sessionId, request.protocol === 'https'))
      reply.header('cache-control', 'no-store')
      return {
        userId: s.userId,
        email: s.email,
        tenantId: s.tenantId,
        tenantName: tenant?.name ?? s.tenantId,
        csrfToken: s.csrfToken,
        expiresMs: s.expiresMs,
      }
    },
  )
  app.get(
    '/console/api/session',
    {
      schema: {
        summary: 'The signed-in user, tenant and CSRF token',
        tags,
        querystring: NoQuery,
        response: { 200: SessionView, ...errors(401) },
      },
    },
    async (request, reply) => {
      const auth = consoleAuth(request.auth)
      reply.header('cache-control', 'no-store')
      return {
        userId: auth.console.userId,
        email: auth.console.email,
        tenantId: auth.tenant.id,
        tenantName: auth.tenant.name,
        csrfToken: auth.console.csrfToken,
        expiresMs: auth.console.expiresMs,
      }
    },
  )
  app.post(
    '/console/api/sign-out',
    {
      schema: {
        summary: 'End the session on the server and clear the cookie',
        tags,
        querystring: NoQuery,
        response: { 200: SignedOut, ...errors(401, 403) },
      },
    },
    async (request, reply) => {
      await signOut(request.server.services.store, consoleAuth(request.auth))
      reply.header('set-cookie', sessionSetCookie(null, request.protocol === 'https'))
      return { signedOut: true }
    },
  )
  app.get(
    '/console/api/events/:id',
    {
      schema: {
        summary: 'One event with its explanation, labels and device timeline',
        tags,
        params: EventParams,
        querystring: NoQuery,
        response: { 200: EventDetail, ...errors(401, 404) },
      },
    },
    async (request) => eventDetail(tenantContext(request), request.params.id),
  )
  app.get(
    '/console/api/overview',
    {
      schema: {
        summary: 'Events per hour by verdict, rates, top reasons and quota used this month',
        tags,
        querystring: OverviewQuery,
        response: { 200: Overview, ...errors(400, 401) },
      },
    },
    async (request) =>
      overview(
        tenantContext(request),
        digits(request.query.hours, 'query.hours', { fallback: 24, min: 1, max: 720 }),
      ),
  )
  app.get(
    '/console/api/review',
    {
      schema: {
        summary: 'Events waiting for a decision: verdict review, no label yet, oldest first',
        tags,
        querystring: ReviewQuery,
        response: { 200: ReviewQueue, ...errors(400, 401) },
      },
    },
    async (request) =>
      reviewQueue(
        tenantContext(request),
        digits(request.query.limit, 'query.limit', { fallback: 50, min: 1, max: 200 }),
      ),
  )
  app.get(
    '/console/api/defaults',
    {
      schema: {
        summary: 'Built-in weights and thresholds',
        tags,
        querystring: NoQuery,
        response: { 200: Defaults },
      },
    },
    async () => scoringDefaults(),
  )
  app.get(
    '/console/api/keys',
    { schema: { summary: "The tenant's API keys", tags, querystring: NoQuery, response: { 200: KeyList } } },
    async (request) => tenantKeys(tenantContext(request)),
  )
  app.post(
    '/console/api/keys',
    {
      schema: {
        summary: 'Create a secret or publishable key (the key is shown once)',
        tags,
        querystring: NoQuery,
        body: NewKeyBody,
        response: { 200: IssuedKey, ...errors(400, 401, 403) },
      },
    },
    async (request) => createTenantKey(tenantContext(request), request.body),
  )
  app.post(
    '/console/api/keys/:keyId/rotate',
    {
      schema: {
        summary: 'Replace a key with a new one (the old one stops working)',
        tags,
        params: KeyParams,
        querystring: NoQuery,
        response: { 200: IssuedKey, ...errors(401, 403, 404, 409) },
      },
    },
    async (request) => rotateTenantKey(tenantContext(request), request.params.keyId),
  )
  app.post(
    '/console/api/keys/:keyId/revoke',
    {
      schema: {
        summary: 'Revoke a key',
        tags,
        params: KeyParams,
        querystring: NoQuery,
        response: { 200: Revoked, ...errors(401, 403, 404, 409) },
      },
    },
    async (request) => revokeTenantKey(tenantContext(request), request.params.keyId),
  )
  app.get(
    '/console/api/users',
    {
      schema: {
        summary: "The tenant's console users",
        tags,
        querystring: NoQuery,
        response: { 200: UserList },
      },
    },
    async (request) => tenantUsers(tenantContext(request)),
  )
  app.post(
    '/console/api/users',
    {
      schema: {
        summary: 'Add a console user to this tenant (409 when the email is taken)',
        tags,
        querystring: NoQuery,
        body: NewUserBody,
        response: { 200: NewUser, ...errors(400, 401, 403, 409) },
      },
    },
    async (request) => addTenantUser(tenantContext(request), request.body),
  )
}
