import type { App } from './types.js'

export function registerOpenApiRoute(app: App): void {
  app.get('/v1/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async () => app.swagger())
}
