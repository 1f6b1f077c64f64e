import { Type } from '@fastify/type-provider-typebox'
import { Digits, Nullable, Stored, StrEnum, Strict } from './common.js'

/** The real outcomes a label records. */
export const LabelKind = StrEnum(['fraud', 'chargeback', 'legit'] as const, 'the real outcome', 'LabelKind')

export const LabelBody = Strict(
  {
    label: LabelKind,
    event_id: Type.Optional(Type.String({ maxLength: 64, description: 'id of an event this tenant scored' })),
    user_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description:
          'a user id: without event_id the label covers all of its events; with event_id it names the user of an event that has none',
      }),
    ),
    entities: Type.Optional(
      Strict({
        ip: Type.Optional(Type.String({ maxLength: 45, format: 'ip' })),
        email: Type.Optional(Type.String({ maxLength: 320, format: 'email' })),
        device_id: Type.Optional(Type.String({ maxLength: 256 })),
      }),
    ),
    note: Type.Optional(Type.String({ maxLength: 500 })),
  },
  {
    title: 'LabelRequest',
    examples: [
      { label: 'fraud', event_id: '0b6e4f7c-3d1a-4f5e-9c2b-8a7d6e5f4c3b', note: 'chargeback received' },
    ],
  },
)

/** Entity kinds: email, ip, phone, device or user. */
const Kinds = (description: string) => Type.Array(Type.String(), { description })

export const LabelResult = Type.Object(
  {
    label_id: Type.String(),
    label: Stored(LabelKind),
    event_id: Nullable(Type.String()),
    user_id: Nullable(Type.String({ description: 'the user the label is about (of its event, or as sent)' })),
    network: Type.Object({
      shared: Type.Boolean({ description: 'whether this tenant contributes to the operator network' }),
      contributed: Kinds('kinds of the entities this label flagged in the operator network'),
    }),
    suppressed: Kinds('kinds of the entities a legit label suppressed for this tenant'),
  },
  { title: 'LabelResult' },
)

/** One recorded outcome, as listings show it (never an identifier hash). */
export const LabelView = Type.Object(
  {
    label_id: Type.String(),
    label: Stored(LabelKind),
    event_id: Nullable(Type.String()),
    user_id: Nullable(
      Type.String({ description: 'a label with user_id and no event_id covers all of that user’s events' }),
    ),
    note: Nullable(Type.String()),
    created_ms: Type.Integer(),
  },
  { title: 'Label' },
)

export const LabelsQuery = Strict({
  limit: Type.Optional(Digits('page size, at most 200 (default 50)')),
  offset: Type.Optional(Digits('labels to skip')),
  event_id: Type.Optional(Type.String({ maxLength: 64, description: 'only labels on this event' })),
  user_id: Type.Optional(Type.String({ maxLength: 256, description: 'only labels naming this user' })),
  label: Type.Optional(LabelKind),
  since_ms: Type.Optional(
    Type.String({
      pattern: '^\\d{1,16}$',
      description: 'only labels created at or after this time (ms since the epoch)',
    }),
  ),
  until_ms: Type.Optional(
    Type.String({
      pattern: '^\\d{1,16}$',
      description: 'only labels created before this time (ms since the epoch)',
    }),
  ),
})

export const LabelsPage = Type.Object(
  {
    labels: Type.Array(LabelView),
    total: Type.Integer({ description: 'labels matching the filter' }),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { title: 'LabelsPage' },
)

export const LabelParams = Strict({ id: Type.String({ maxLength: 20, description: 'label_id' }) })

export const LabelWithdrawn = Type.Object(
  {
    ...LabelView.properties,
    withdrawn: Type.Boolean(),
    network: Type.Object({
      withdrawn: Kinds('kinds of the entities whose operator-network flags were removed with the label'),
    }),
  },
  { title: 'LabelWithdrawn' },
)
