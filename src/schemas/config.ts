import { type TSchema, Type } from '@fastify/type-provider-typebox'
import {
  THRESHOLD_KEYS,
  type ThresholdKey,
  type Thresholds,
  WEIGHT_KEYS,
  type WeightKey,
  type Weights,
} from '../scoring/config.js'
import { Strict } from './common.js'

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
  overrides: Section,
  effective: Section,
})
