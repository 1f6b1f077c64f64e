import { type TSchema, Type } from '@fastify/type-provider-typebox'
import {
  THRESHOLD_KEYS,
  type ThresholdKey,
  type Thresholds,
  WEIGHT_KEYS,
  type WeightKey,
  type Weights,
} from '../scoring/config.js'
import { Digits, Nullable, Strict } from './common.js'

const value = () => Type.Number({ minimum: 0, maximum: 100 })

function keyed<K extends string>(keys: readonly K[], optional: boolean) {
  const props: Record<string, TSchema> = {}
  for (const k of keys) props[k] = optional ? Type.Optional(value()) : value()
  return Type.Object(props, { additionalProperties: false })
}

export const WeightsPatch = Type.Unsafe<Partial<Weights>>(keyed<WeightKey>(WEIGHT_KEYS, true))
export const ThresholdsPatch = Type.Unsafe<Partial<Thresholds>>(keyed<ThresholdKey>(THRESHOLD_KEYS, true))

export const ConfigPatch = Strict({
  weights: Type.Optional(WeightsPatch),
  thresholds: Type.Optional(ThresholdsPatch),
})

const Section = Type.Object({
  weights: Type.Record(Type.String(), Type.Number()),
  thresholds: Type.Record(Type.String(), Type.Number()),
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
})
