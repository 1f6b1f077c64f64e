import { type TSchema, Type } from '@fastify/type-provider-typebox'
import {
  THRESHOLD_KEYS,
  type ThresholdKey,
  type Thresholds,
  WEIGHT_KEYS,
  type WeightKey,
  type Weights,
} from '../scoring/tenant-config.js'
import { Digits, Nullable, StrEnum, Strict } from './common.js'

const value = () =>
  Nullable(Type.Number({ minimum: 0, maximum: 100, description: '0-100; null removes your override' }))

function keyed<K extends string>(keys: readonly K[]) {
  const props: Record<string, TSchema> = {}
  for (const k of keys) props[k] = Type.Optional(value())
  return Type.Object(props, { additionalProperties: false })
}

type Patch<T> = { [K in keyof T]?: T[K] | null }
export const WeightsPatch = Type.Unsafe<Patch<Weights>>(keyed<WeightKey>(WEIGHT_KEYS))
export const ThresholdsPatch = Type.Unsafe<Patch<Thresholds>>(keyed<ThresholdKey>(THRESHOLD_KEYS))

/** A tenant rule (docs/rules.md); the condition is compiled and checked by the service. */
export const RuleSpec = Strict(
  {
    id: Type.String({
      pattern: '^[a-z][a-z0-9_]{0,39}$',
      description: 'lower-case letters, digits and _, 1-40 characters; its reason code is rule:<id>',
    }),
    description: Type.Optional(Type.String({ maxLength: 200, description: 'shown as the check message' })),
    when: Type.String({ minLength: 1, maxLength: 2000, description: 'a CEL condition (docs/rules.md)' }),
    then: Type.Union([
      Strict({ score: Type.Integer({ minimum: -100, maximum: 100 }) }),
      Strict({ verdict: StrEnum(['allow', 'review', 'block'] as const) }),
    ]),
    mode: StrEnum(['enforce', 'shadow', 'off'] as const),
    rollout: Type.Integer({
      minimum: 0,
      maximum: 100,
      description: 'share of users (or devices) it applies to, %',
    }),
  },
  { description: 'a tenant rule' },
)

/** How the tenant declares its attributes (docs/rules.md, "Hashed and counted attributes"). */
export const AttributeSpecs = Type.Record(
  Type.String({ pattern: '^[a-z][a-z0-9_]{0,39}$' }),
  Strict({
    hashed: Type.Optional(
      Type.Boolean({
        description:
          'store and show only its keyed hash; rules use it only for equality and membership (a string compared with it is hashed when the rule is saved)',
      }),
    ),
    counted: Type.Optional(
      Type.Boolean({
        description:
          'keep distinct accounts and events per value (each string of a list on its own) over 10 minutes, 1 hour and 24 hours (at most 5)',
      }),
    ),
  }),
  {
    maxProperties: 32,
    additionalProperties: false,
    description: 'by attribute key; replaces the stored declarations ({} removes them)',
  },
)

export const ConfigPatch = Strict({
  weights: Type.Optional(WeightsPatch),
  thresholds: Type.Optional(ThresholdsPatch),
  rules: Type.Optional(
    Type.Array(RuleSpec, {
      maxItems: 200,
      description: "the tenant's whole rule list, replacing the stored one",
    }),
  ),
  attributes: Type.Optional(AttributeSpecs),
})

const Section = Type.Object({
  weights: Type.Record(Type.String(), Type.Number()),
  thresholds: Type.Record(Type.String(), Type.Number()),
  rules: Type.Optional(Type.Array(RuleSpec)),
  attributes: Type.Optional(AttributeSpecs),
})

export const ConfigView = Type.Object({
  version: Type.Integer({
    minimum: 0,
    description: 'the config version these values make (0: never changed)',
  }),
  overrides: Section,
  effective: Section,
})

export const ConfigVersionsQuery = Strict({
  limit: Type.Optional(Digits('page size, at most 100 (default 20)')),
  offset: Type.Optional(Digits('versions to skip')),
})

export const ConfigVersions = Type.Object({
  versions: Type.Array(
    Type.Object({
      id: Type.Integer({ minimum: 0, description: 'the version number, 0 being the starting configuration' }),
      createdMs: Type.Integer({
        description: "when the version took effect (version 0: the tenant's creation)",
      }),
      config: Section,
    }),
    { description: 'newest first' },
  ),
})

const Window = {
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100_000,
      description: 'the newest events to decide again (default 10,000; 100,000 when a window is given)',
    }),
  ),
  since_ms: Type.Optional(
    Type.Integer({ minimum: 0, description: 'only events created at or after this time' }),
  ),
  until_ms: Type.Optional(
    Type.Integer({ minimum: 0, description: 'only events created before this time (exclusive)' }),
  ),
}

export const SimulateRequest = Strict({
  weights: Type.Optional(WeightsPatch),
  thresholds: Type.Optional(ThresholdsPatch),
  rules: Type.Optional(
    Type.Array(RuleSpec, { maxItems: 200, description: 'a proposed rule list, replacing the current one' }),
  ),
  ...Window,
})

const VerdictCounts = Type.Object({ allow: Type.Integer(), review: Type.Integer(), block: Type.Integer() })
const Share = Nullable(Type.Number({ minimum: 0, maximum: 1 }))
const Quality = Type.Object({ precision: Share, recall: Share })
const Side = Type.Object({ block: Quality, review: Quality })

export const Simulation = Type.Object({
  events: Type.Integer({ description: 'events decided again' }),
  changed: Type.Integer({ description: 'of those, events whose verdict the proposal changes' }),
  skipped: Type.Integer({ description: 'events recorded without their inputs (before replay existed)' }),
  config_version: Type.Integer({ description: 'the current config version the proposal is compared with' }),
  transitions: Type.Object(
    { allow: VerdictCounts, review: VerdictCounts, block: VerdictCounts },
    { description: 'events by verdict under the current config (outer) and under the proposal (inner)' },
  ),
  labelled: Type.Object({
    events: Type.Integer({ description: 'simulated events with a label (the latest one counts)' }),
    fraud: Type.Integer(),
    legit: Type.Integer(),
    before: Side,
    after: Side,
  }),
  rules: Type.Optional(
    Type.Array(
      Type.Object({
        id: Type.String(),
        mode: StrEnum(['enforce', 'shadow', 'off'] as const),
        fired: Type.Integer({ description: 'simulated events on which its condition held (off rules: 0)' }),
      }),
      { description: "the proposal's tenant rules and how often each would fire (absent without rules)" },
    ),
  ),
})
