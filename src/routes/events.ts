import { tenantContext } from '../context.js'
import { badRequest } from '../errors.js'
import { errors, NoQuery } from '../schemas/common.js'
import {
  EVENTS_MAX_OFFSET,
  EventDetail,
  EventParams,
  EventsPage,
  EventsQuery,
  Stats,
  StatsQuery,
  Usage,
} from '../schemas/events.js'
import { usageReport } from '../services/access/usage.js'
import { eventStats, getEvent, listEvents } from '../services/decisions/events.js'
import { digits } from '../util/query.js'
import type { App } from './types.js'

/** Deep offsets cost a walk over every skipped event: past the cap the cursor pages instead. */
function eventsOffset(value: string | undefined): number {
  const offset = digits(value, 'query.offset', { fallback: 0 })
  if (offset > EVENTS_MAX_OFFSET)
    throw badRequest(
      `query.offset must be at most ${EVENTS_MAX_OFFSET}; to page further, pass before=<id of the last event listed> (or narrow with until_ms)`,
    )
  return offset
}

export function registerEventRoutes(app: App): void {
  app.get(
    '/v1/events',
    {
      schema: {
        operationId: 'listEvents',
        description:
          'Filters combine: verdict, event name, exact user id, reason code, time range, or a substring of a user id or fingerprint.',
        summary: 'Scored events, newest first (emailHash and emailDomain instead of a raw email)',
        tags: ['events'],
        querystring: EventsQuery,
        response: { 200: EventsPage, ...errors(400, 401, 429) },
      },
    },
    async (request) => {
      const q = request.query
      return listEvents(tenantContext(request), {
        limit: digits(q.limit, 'query.limit', { fallback: 50, min: 1, max: 200 }),
        offset: eventsOffset(q.offset),
        ...(q.verdict ? { verdict: q.verdict } : {}),
        ...(q.event ? { event: q.event } : {}),
        ...(q.q ? { q: q.q } : {}),
        ...(q.before ? { beforeId: q.before } : {}),
        ...(q.user_id !== undefined ? { userId: q.user_id } : {}),
        ...(q.reason ? { reason: q.reason } : {}),
        ...(q.since_ms ? { sinceMs: digits(q.since_ms, 'query.since_ms', { fallback: 0 }) } : {}),
        ...(q.until_ms ? { untilMs: digits(q.until_ms, 'query.until_ms', { fallback: 0 }) } : {}),
      })
    },
  )
  app.get(
    '/v1/events/:id',
    {
      schema: {
        operationId: 'getEvent',
        description: 'Unknown ids, and ids of another tenant, answer 404.',
        summary: 'One scored event as the listing shows it, with its labels and device profile',
        tags: ['events'],
        params: EventParams,
        querystring: NoQuery,
        response: { 200: EventDetail, ...errors(400, 401, 404, 429) },
      },
    },
    async (request) => getEvent(tenantContext(request), request.params.id),
  )
  app.get(
    '/v1/usage',
    {
      schema: {
        operationId: 'getUsage',
        description: 'The same figures are sent on every keyed answer in the Quota-* headers.',
        summary: "This month's metered units against the tenant's monthly quota",
        tags: ['service'],
        querystring: NoQuery,
        response: { 200: Usage, ...errors(400, 401, 429) },
      },
    },
    async (request) => usageReport(tenantContext(request)),
  )
  app.get(
    '/v1/stats',
    {
      schema: {
        operationId: 'getStats',
        description: 'The window is counted back from now, in hours (default 24).',
        summary: 'Totals and average score per verdict and the top reason codes over a rolling window',
        tags: ['events'],
        querystring: StatsQuery,
        response: { 200: Stats, ...errors(400, 401, 429) },
      },
    },
    async (request) =>
      eventStats(
        tenantContext(request),
        digits(request.query.window_hours, 'query.window_hours', { fallback: 24, min: 1, max: 8760 }),
      ),
  )
}
