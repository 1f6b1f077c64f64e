import { tenantContext } from '../context.js'
import { errors, NoQuery } from '../schemas/common.js'
import {
  DeliveriesQuery,
  DeliveryPage,
  DeliveryParams,
  Redelivered,
  RotateBody,
  WebhookBody,
  WebhookDeleted,
  WebhookList,
  WebhookParams,
  WebhookPatch,
  WebhookView,
  WebhookWithSecret,
} from '../schemas/webhooks.js'
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  redeliver,
  rotateSecret,
  updateEndpoint,
} from '../services/webhooks/endpoints.js'
import { digits } from '../util/query.js'
import type { App } from './types.js'

/** Webhook endpoints of the tenant, their deliveries and redelivery (docs/webhooks.md). */
export function registerWebhookRoutes(app: App): void {
  const tags = ['webhooks']
  app.post(
    '/v1/webhooks',
    {
      schema: {
        operationId: 'createWebhook',
        description:
          'Events are delivered signed (Standard Webhooks); store the secret, it is not shown again.',
        summary: 'Add a webhook endpoint; the answer shows its signing secret, only this once',
        tags,
        querystring: NoQuery,
        body: WebhookBody,
        response: { 200: WebhookWithSecret, ...errors(400, 401, 409, 429) },
      },
    },
    async (request) => createEndpoint(tenantContext(request), request.body),
  )

  app.get(
    '/v1/webhooks',
    {
      schema: {
        operationId: 'listWebhooks',
        description: 'Secrets are never shown here.',
        summary: "The tenant's webhook endpoints",
        tags,
        querystring: NoQuery,
        response: { 200: WebhookList, ...errors(400, 401, 429) },
      },
    },
    async (request) => listEndpoints(tenantContext(request)),
  )

  app.get(
    '/v1/webhooks/:webhookId',
    {
      schema: {
        operationId: 'getWebhook',
        description:
          'With its delivery state: since when its attempts fail and why it was disabled, if it was.',
        summary: 'One webhook endpoint',
        tags,
        params: WebhookParams,
        querystring: NoQuery,
        response: { 200: WebhookView, ...errors(400, 401, 404, 429) },
      },
    },
    async (request) => getEndpoint(tenantContext(request), request.params.webhookId),
  )

  app.patch(
    '/v1/webhooks/:webhookId',
    {
      schema: {
        operationId: 'updateWebhook',
        description: 'Fields not sent keep their value.',
        summary:
          'Change an endpoint: url, events, description, or enabled (re-enabling clears its failure state)',
        tags,
        params: WebhookParams,
        querystring: NoQuery,
        body: WebhookPatch,
        response: { 200: WebhookView, ...errors(400, 401, 404, 429) },
      },
    },
    async (request) => updateEndpoint(tenantContext(request), request.params.webhookId, request.body),
  )

  app.delete(
    '/v1/webhooks/:webhookId',
    {
      schema: {
        operationId: 'deleteWebhook',
        description: 'Pending deliveries are dropped with it.',
        summary: 'Delete an endpoint and its deliveries',
        tags,
        params: WebhookParams,
        querystring: NoQuery,
        response: { 200: WebhookDeleted, ...errors(400, 401, 404, 429) },
      },
    },
    async (request) => deleteEndpoint(tenantContext(request), request.params.webhookId),
  )

  app.post(
    '/v1/webhooks/:webhookId/rotate-secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        description: 'The answer shows the new secret, only this once.',
        summary: 'A new signing secret; the old one keeps signing beside it for overlap_seconds',
        tags,
        params: WebhookParams,
        querystring: NoQuery,
        body: RotateBody,
        response: { 200: WebhookWithSecret, ...errors(400, 401, 404, 429) },
      },
    },
    async (request) =>
      rotateSecret(tenantContext(request), request.params.webhookId, request.body.overlap_seconds),
  )

  app.get(
    '/v1/webhooks/:webhookId/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        description: 'Each with its status, attempts and next attempt.',
        summary: "An endpoint's deliveries, newest first (kept 30 days)",
        tags,
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: { 200: DeliveryPage, ...errors(400, 401, 404, 429) },
      },
    },
    async (request) => {
      const limit = digits(request.query.limit, 'query.limit', { fallback: 50, min: 1, max: 200 })
      const offset = digits(request.query.offset, 'query.offset', { fallback: 0 })
      const status = request.query.status
      return listDeliveries(tenantContext(request), request.params.webhookId, {
        limit,
        offset,
        ...(status ? { status } : {}),
      })
    },
  )

  app.post(
    '/v1/webhooks/:webhookId/deliveries/:messageId/redeliver',
    {
      schema: {
        operationId: 'redeliverWebhook',
        description: 'A disabled endpoint, or a delivery being sent right now, answers 409.',
        summary: 'Send a delivery again (same webhook-id), from the start of the retry schedule',
        tags,
        params: DeliveryParams,
        querystring: NoQuery,
        response: { 200: Redelivered, ...errors(400, 401, 404, 409, 429) },
      },
    },
    async (request) => redeliver(tenantContext(request), request.params.webhookId, request.params.messageId),
  )
}
