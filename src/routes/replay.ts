import { tenantContext } from '../context.js'
import { errors, NoQuery } from '../schemas/common.js'
import { Replay, ReplayRequest } from '../schemas/replay.js'
import { replayEvent } from '../services/decisions/replay.js'
import type { App } from './types.js'

export function registerReplayRoutes(app: App): void {
  app.post(
    '/v1/replay',
    {
      schema: {
        operationId: 'replayEvent',
        summary:
          'Decide a recorded event again from its recorded inputs and compare with the recorded decision',
        description:
          'Runs the engine on the signals and history counts the event recorded, under the config version it was decided under. Events decided under the current rules version replay identically. See docs/outcomes.md.',
        tags: ['labels'],
        querystring: NoQuery,
        body: ReplayRequest,
        response: { 200: Replay, ...errors(400, 401, 404, 422, 429) },
      },
    },
    async (request) => replayEvent(tenantContext(request), request.body.event_id),
  )
}
