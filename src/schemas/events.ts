import { Type } from '@fastify/type-provider-typebox'
import { Digits, Nullable, Stored, Strict, Verdict } from './common.js'
import { LabelView } from './labels.js'
import { Reason } from './score.js'

/** A time in milliseconds since the epoch, as a string of digits (longer than Digits allows). */
const Millis = (description: string) => Type.String({ pattern: '^\\d{1,16}$', description })

/** The deepest `offset` of GET /v1/events: beyond it, page with the `before` cursor. */
export const EVENTS_MAX_OFFSET = 1_000

export const EventsQuery = Strict({
  limit: Type.Optional(Digits('page size, at most 200 (default 50)')),
  offset: Type.Optional(Digits(`events to skip, at most ${EVENTS_MAX_OFFSET}; page further with \`before\``)),
  before: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'keyset cursor (extension): an event id; only events listed after it (older, or as old with a smaller id). Pass the last listed id, or searchedTo, to page on',
    }),
  ),
  verdict: Type.Optional(Verdict),
  event: Type.Optional(Type.String({ maxLength: 64, description: 'only events with this name' })),
  user_id: Type.Optional(Type.String({ maxLength: 256, description: 'only events of exactly this user id' })),
  q: Type.Optional(
    Type.String({ maxLength: 256, description: 'substring of a user id or device fingerprint' }),
  ),
  reason: Type.Optional(
    Type.String({ pattern: '^[a-z0-9_]{1,64}$', description: 'only events this reason code fired on' }),
  ),
  since_ms: Type.Optional(Millis('only events created at or after this time (ms since the epoch)')),
  until_ms: Type.Optional(Millis('only events created before this time (ms since the epoch)')),
})

export const StatsQuery = Strict({
  window_hours: Type.Optional(Digits('rolling window in hours, 1-8760 (default 24)')),
})

/**
 * A fired check as it was recorded at scoring time. Open: a row keeps whatever the engine of its day
 * wrote, and a listing must not drop any of it.
 */
const RecordedCheck = Type.Object(
  {
    check: Type.String(),
    key: Type.Optional(Type.String()),
    weight: Type.Number(),
    reason: Stored(Reason),
    message: Type.String(),
    evidence: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  {
    additionalProperties: true,
    title: 'RecordedCheck',
    description: 'A check that fired, as recorded when the event was scored',
  },
)

/** A stored event as listings and subject exports show it: hashes and coarse attributes, never a raw email. */
export const EventView = Type.Object({
  id: Type.String(),
  createdMs: Type.Integer(),
  event: Type.String(),
  userId: Nullable(Type.String()),
  deviceId: Nullable(Type.String({ description: 'raw fingerprint as sent' })),
  resolvedDeviceId: Nullable(Type.String()),
  emailHash: Nullable(Type.String({ description: 'keyed hash of the canonical mailbox' })),
  emailDomain: Nullable(Type.String()),
  ipPrefix: Nullable(Type.String({ description: 'the /24 (IPv4) or /48 (IPv6), never the address' })),
  asn: Nullable(Type.Integer()),
  ipCountry: Nullable(Type.String()),
  phoneHash: Nullable(Type.String()),
  phoneCountry: Nullable(Type.String()),
  score: Type.Number(),
  verdict: Stored(Verdict),
  reasons: Type.Array(Stored(Reason)),
  checks: Type.Array(RecordedCheck),
})

const EVENT_EXAMPLE = {
  id: '0b6e4f7c-3d1a-4f5e-9c2b-8a7d6e5f4c3b',
  createdMs: 1777888800000,
  event: 'signup',
  userId: 'u-1042',
  deviceId: null,
  resolvedDeviceId: null,
  emailHash: '9f2c4e1a7b3d5f60',
  emailDomain: 'example.com',
  ipPrefix: '203.0.113.0/24',
  asn: 16509,
  ipCountry: 'US',
  phoneHash: null,
  phoneCountry: null,
  score: 35,
  verdict: 'allow',
  reasons: ['datacenter_ip'],
  checks: [
    {
      check: 'ip',
      key: 'datacenter_ip',
      weight: 25,
      reason: 'datacenter_ip',
      message: 'IP belongs to a hosting provider',
    },
  ],
  labels: [],
}

/** An event in a listing: as stored, with the labels that apply to it (its own and its user's). */
export const ListedEvent = Type.Object(
  { ...EventView.properties, labels: Type.Array(LabelView) },
  {
    title: 'Event',
    description: 'A scored event as stored (hashes and coarse attributes), with the labels that apply to it',
    examples: [EVENT_EXAMPLE],
  },
)

/** GET /v1/events/{id}: the listed event and, when it has one, its device's profile. */
export const EventDetail = Type.Object(
  {
    ...ListedEvent.properties,
    device: Nullable(
      Type.Object({
        resolvedId: Type.String(),
        profile: Type.Object(
          {},
          {
            additionalProperties: true,
            description: 'first/last seen, observations, distinct IPs, accounts, countries, browser',
          },
        ),
      }),
    ),
  },
  { title: 'EventDetail' },
)

export const EventParams = Strict({ id: Type.String({ maxLength: 64, description: 'event_id' }) })

export const EventsPage = Type.Object(
  {
    events: Type.Array(ListedEvent),
    total: Type.Integer({ description: 'events matching the filter, counted up to 10,000' }),
    limit: Type.Integer(),
    offset: Type.Integer(),
    totalCapped: Type.Boolean({
      description:
        'extension: more events may match than total says (the count stops at 10,000; verdict, event, reason and q search only the newest 2,500 events of the range)',
    }),
    searchedTo: Nullable(
      Type.String({
        description:
          'extension: when the search stopped at its 2,500 events, the id of the oldest one it read; pass it as before to search older events. null when the whole range was searched',
      }),
    ),
  },
  { title: 'EventsPage' },
)

const VerdictStats = Type.Object({
  count: Type.Integer(),
  avgScore: Nullable(Type.Number({ description: 'null when no event had this verdict' })),
})

export const Stats = Type.Object({
  windowHours: Type.Integer(),
  fromMs: Type.Integer(),
  toMs: Type.Integer(),
  total: Type.Integer(),
  avgScore: Nullable(Type.Number()),
  verdicts: Type.Object({ allow: VerdictStats, review: VerdictStats, block: VerdictStats }),
  topReasons: Type.Array(Type.Object({ reason: Type.String(), count: Type.Integer() }), {
    description: 'at most 10, most frequent first',
  }),
})

export const Usage = Type.Object(
  {
    period: Type.String({ description: 'the UTC calendar month, YYYY-MM' }),
    used: Type.Integer({ description: 'metered units used this month' }),
    quota: Type.Integer({ description: 'the monthly quota' }),
    remaining: Type.Integer(),
    resets_ms: Type.Integer({ description: 'start of next month (ms since the epoch)' }),
  },
  { title: 'Usage' },
)
