import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { VERDICT_ICON_SVG, VERDICT_LOGO_SVG } from '../services/console/brand.js'
import { finishDocument } from './openapi-document.js'

/**
 * OpenAPI 3.0.3 generated from the route schemas, then finished (plugins/openapi-document.ts): named
 * component schemas, shared error answers and headers, examples. The API-key scheme applies by default;
 * keyless routes lift it with `security: []`. Only the /v1 surface is described.
 */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'verdict', version: '1.0.0' },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          bearer: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }],
    },
    transform: ({ schema, url }) => ({
      schema: url.startsWith('/v1/') ? schema : { ...schema, hide: true },
      url,
    }),
    transformObject: (doc) =>
      'openapiObject' in doc
        ? (finishDocument(doc.openapiObject as Record<string, unknown>, version) as typeof doc.openapiObject)
        : doc.swaggerObject,
  })
  // The reference page reads the same document as API clients (/v1/openapi.json; `urls` takes the
  // place of the plugin's own /docs/json) and carries verdict's name and mark.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', urls: [{ url: '/v1/openapi.json', name: 'verdict API' }] },
    theme: {
      title: 'verdict API reference',
      favicon: [
        {
          filename: 'favicon.svg',
          rel: 'icon',
          sizes: 'any',
          type: 'image/svg+xml',
          content: VERDICT_ICON_SVG,
        },
      ],
    },
    logo: { type: 'image/svg+xml', content: VERDICT_LOGO_SVG },
  })
}
