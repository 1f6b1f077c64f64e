import { type TProperties, Type } from '@fastify/type-provider-typebox'
import { LookupView } from './checks.js'
import { Digits, Nullable, StrEnum, Strict } from './common.js'
import { EventView } from './events.js'

const identifiers = {
  email: Type.Optional(Type.String({ maxLength: 320 })),
  phone: Type.Optional(Type.String({ maxLength: 32 })),
  ip: Type.Optional(Type.String({ maxLength: 45 })),
  device_id: Type.Optional(Type.String({ maxLength: 256 })),
  user_id: Type.Optional(Type.String({ maxLength: 256 })),
}

export const SubjectBody = Strict({
  ...identifiers,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000 })),
})
export const ForgetBody = Strict(identifiers)
export const SuppressionsQuery = Strict({ limit: Type.Optional(Digits('at most 500 (default 100)')) })

/**
 * Objects of the subject export are open: an access request must return everything held, so a field
 * the service adds later reaches the person even before this schema names it.
 */
const Open = <T extends TProperties>(props: T) => Type.Object(props, { additionalProperties: true })

export const SubjectExport = Open({
  counts: Open({
    events: Type.Integer(),
    lookups: Type.Integer(),
    list_entries: Type.Integer(),
    labels: Type.Integer(),
    device_observations: Type.Integer(),
    devices: Type.Integer(),
    beacons: Type.Integer({ description: 'beacon observations listed (at most `limit`)' }),
    idempotent_responses: Type.Integer({
      description: "stored Idempotency-Key responses (kept 24 hours, sealed) naming the subject's events",
    }),
  }),
  events: Type.Array(EventView),
  lookups: Type.Array(LookupView),
  list_entries: Type.Array(
    Open({
      id: Type.String(),
      list: Type.String(),
      type: Type.String(),
      hint: Type.String(),
      createdMs: Type.Integer(),
    }),
  ),
  device_observations: Type.Array(
    Open({
      eventId: Type.String(),
      createdMs: Type.Integer(),
      deviceId: Nullable(Type.String()),
      resolvedId: Type.String(),
      rung: Type.Integer(),
      ipPrefix: Nullable(Type.String()),
      asn: Nullable(Type.Integer()),
      country: Nullable(Type.String()),
      connectionType: Nullable(Type.String()),
      verdict: Type.String(),
    }),
  ),
  devices: Type.Array(
    Open({
      resolvedId: Type.String(),
      firstSeenMs: Type.Integer(),
      lastSeenMs: Type.Integer(),
      observations: Type.Integer(),
      distinctIps: Type.Integer(),
      accounts: Type.Integer(),
    }),
  ),
  beacons: Type.Array(
    Open({
      visitId: Type.String(),
      createdMs: Type.Integer(),
      deviceId: Type.String(),
      os: Nullable(Type.String()),
      browser: Nullable(Type.String()),
      mobile: Type.Boolean(),
      flags: Open({}),
      /** JA4 of the beacon's TLS connection (software, not a person), when one was captured. */
      ja4: Nullable(Type.String()),
    }),
  ),
  idempotent_responses: Type.Array(Open({ eventId: Type.String(), createdMs: Type.Integer() })),
  labels: Type.Array(
    Open({
      id: Type.String(),
      eventId: Nullable(Type.String()),
      label: Type.String(),
      note: Nullable(Type.String()),
      createdMs: Type.Integer(),
    }),
  ),
})

export const ForgetResult = Type.Object({
  deleted: Open({
    events: Type.Integer(),
    lookups: Type.Integer(),
    list_entries: Type.Integer({ description: 'list entries deleted (the name /v1/subject uses)' }),
    listEntries: Type.Integer({ description: 'deprecated: the same count as list_entries; removed in v2' }),
    labels: Type.Integer(),
    observations: Type.Integer(),
    idempotent_responses: Type.Integer({
      description: 'stored Idempotency-Key responses naming an erased event',
    }),
  }),
  suppressions: Type.Integer({ description: 'forget suppressions written, one per identifier form' }),
  storage: StrEnum(
    ['reclaimed', 'pending'] as const,
    'reclaimed: the erased bytes are gone from the files. pending: the rows are gone from every query and the bytes leave the files later (PostgreSQL: at the hourly storage-compaction rewrite; SQLite: a long reader held the WAL, the next erasure or checkpoint frees it)',
  ),
})

export const SuppressionsPage = Type.Object({
  suppressions: Type.Array(
    Type.Object({
      action: Type.String({ description: 'forget or legit' }),
      entityType: Type.String(),
      valueHash: Type.String({ description: 'one-way hash; never the identifier' }),
      eventId: Nullable(Type.String()),
      createdMs: Type.Integer(),
    }),
  ),
  limit: Type.Integer(),
})
