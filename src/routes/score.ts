import { tenantContext } from '../context.js'
import { errors, NoQuery } from '../schemas/common.js'
import { BatchScoreBody, BatchScoreResponse, ScoreRequest, ScoreResponse } from '../schemas/score.js'
import { scoreBatch, scoreEvent } from '../services/decisions/score.js'
import { IdempotencyHeaders, idempotencyErrors, replayable } from './idempotent.js'
import type { App } from './types.js'

export function registerScoreRoutes(app: App): void {
  app.post(
    '/v1/score',
    {
      schema: {
        operationId: 'score',
        summary: 'Score an event: score 0-100, verdict, reason codes, evidence and an explanation',
        description:
          'Records the event (hashes and coarse attributes only); velocity history grows with each call.',
        tags: ['score'],
        querystring: NoQuery,
        headers: IdempotencyHeaders,
        body: ScoreRequest,
        response: { 200: ScoreResponse, ...errors(400, 401, 429, 500), ...idempotencyErrors() },
      },
    },
    async (request, reply) =>
      replayable(request, reply, (idem) => scoreEvent(tenantContext(request), request.body, idem)),
  )
  app.post(
    '/v1/batch/score',
    {
      schema: {
        operationId: 'batchScore',
        description:
          'Each row is scored as POST /v1/score would score it, in order; one invalid row rejects the whole batch before anything is recorded.',
        summary: 'Score up to 1000 events in order; later rows see earlier rows',
        tags: ['score', 'batch'],
        querystring: NoQuery,
        headers: IdempotencyHeaders,
        body: BatchScoreBody,
        response: { 200: BatchScoreResponse, ...errors(400, 401, 429), ...idempotencyErrors() },
      },
    },
    async (request, reply) =>
      replayable(request, reply, (idem) => scoreBatch(tenantContext(request), request.body.rows, idem)),
  )
}
