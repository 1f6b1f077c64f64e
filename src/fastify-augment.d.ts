import type { AppServices } from './context.js'
import type { RegisteredRoute } from './routes/types.js'
import type { AuthContext } from './services/access/auth.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the guard when a valid API key was sent. */
    auth: AuthContext | null
  }
  interface FastifyInstance {
    /** Every /v1 route with its auth mode, collected through onRoute. */
    routeTable: RegisteredRoute[]
    /** What every request's context is built on (src/context.ts). */
    services: AppServices
  }
  interface FastifyContextConfig {
    auth?: 'key' | 'optional' | 'none' | 'publishable' | 'console'
    /** An 'auth: none' route that still authenticates a sent secret key (never 401): health's details. */
    readsKey?: boolean
  }
}
