import { Type } from '@fastify/type-provider-typebox'
import { LIST_ENTRY_TYPES } from '../util/entities.js'
import { Digits, Stored, StrEnum, Strict } from './common.js'

/** `allow` and `block` decide; other names are named lists that tenant rules test (docs/rules.md). */
export const LIST_NAME_PATTERN = '^[a-z][a-z0-9_]{0,39}$'
const ListName = (description: string) =>
  Type.String({ pattern: LIST_NAME_PATTERN, minLength: 1, maxLength: 40, description })
const ListedKind = StrEnum(
  LIST_ENTRY_TYPES,
  'what kind of entity; attribute: a value of one of your hashed attributes (named lists only)',
  'ListedKind',
)

export const ListEntryInput = Strict(
  {
    list: ListName('allow, block, or the name of your own list (lower-case letters, digits, _; up to 40)'),
    type: ListedKind,
    value: Type.String({
      minLength: 1,
      maxLength: 320,
      description:
        'the entity; email, ip, phone and attribute are stored hashed; an ip may be a CIDR range (/8-/32, /16-/128); a phone is in international form; an attribute value as your requests send it',
    }),
    expires_ms: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'when the entry stops matching (ms since the epoch, in the future); a job then deletes it',
      }),
    ),
    note: Type.Optional(Type.String({ maxLength: 500, description: 'your note (why it is listed)' })),
  },
  {
    title: 'ListEntryInput',
    examples: [{ list: 'block', type: 'email', value: 'fraudster@example.com', note: 'chargeback 2026-04' }],
  },
)

export const ListEntryView = Type.Object(
  {
    id: Type.String({ description: 'numeric id used by DELETE /v1/lists/{id}' }),
    list: Type.String({ description: 'allow, block or the name of your own list' }),
    type: Stored(ListedKind),
    hint: Type.String({
      description:
        'masked form for email, ip and phone (an ip range narrower than /24 or /48 too); the keyed hash for attribute (as events show a hashed attribute); the value itself for device and user',
    }),
    value: Type.Optional(Type.String()),
    createdMs: Type.Integer(),
    expires_ms: Type.Optional(Type.Integer({ description: 'when it stops matching; absent: never' })),
    note: Type.Optional(Type.String()),
  },
  {
    title: 'ListEntry',
    examples: [
      {
        id: '17',
        list: 'block',
        type: 'email',
        hint: 'f***@example.com',
        createdMs: 1777888800000,
        note: 'chargeback 2026-04',
      },
    ],
  },
)

export const ListQuery = Strict({
  list: Type.Optional(ListName('only entries of this list')),
  type: Type.Optional(StrEnum(LIST_ENTRY_TYPES, 'only entries of this type')),
  status: Type.Optional(
    StrEnum(
      ['active', 'expired'] as const,
      'active: still matching; expired: past expires_ms, not purged yet',
    ),
  ),
  limit: Type.Optional(Digits('page size, at most 1000 (default 500)')),
  offset: Type.Optional(Digits('entries to skip (default 0)')),
})

export const ListPage = Type.Object(
  {
    entries: Type.Array(ListEntryView),
    total: Type.Integer(),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { title: 'ListPage' },
)

export const BatchListsBody = Strict({ rows: Type.Array(ListEntryInput, { minItems: 1, maxItems: 1000 }) })
export const BatchListsResult = Type.Object({ results: Type.Array(ListEntryView) })
export const ListIdParams = Strict({ id: Digits('list entry id') })
