import { Type } from '@fastify/type-provider-typebox'
import { Digits, Nullable, Strict } from './common.js'

export const RulesPerformanceQuery = Strict({
  window_days: Type.Optional(Digits('rolling window in days, 1-365 (default 30)')),
})

const Share = (description: string) => Nullable(Type.Number({ minimum: 0, maximum: 1, description }))

const RulePerformance = Type.Object({
  reason: Type.String({ description: 'the reason code (rule:<id> for your own rules)' }),
  rule_id: Type.Optional(Type.String({ description: 'your own rules only: the rule id (docs/rules.md)' })),
  shadow: Type.Optional(
    Type.Boolean({
      description:
        'your own rules only: true for the row of its shadow hits (held, recorded, never decided), false for its enforced hits',
    }),
  ),
  fired: Type.Integer({ description: 'events of the window the code fired on' }),
  fraud: Type.Integer({ description: 'of those, events whose latest label is fraud or chargeback' }),
  legit: Type.Integer({ description: 'of those, events whose latest label is legit' }),
  precision: Share('fraud / (fraud + legit); null without labelled events'),
  precision_low: Share('lower end of the 95 % Wilson interval of the precision'),
  precision_high: Share('upper end of the 95 % Wilson interval of the precision'),
  recall: Share("share of the window's labelled fraud events the code fired on; null without any"),
  suggested_weight: Nullable(
    Type.Integer({
      minimum: 0,
      maximum: 100,
      description:
        'clamp(round(20 * log2((fraud + 0.5) / (legit + 0.5))), 0, 100); null under 30 labelled events',
    }),
  ),
})

export const RulesPerformance = Type.Object({
  rules: Type.Array(RulePerformance, { description: 'most often fired first' }),
  window_days: Type.Integer(),
  labelled_events: Type.Integer({ description: 'events of the window that carry a label' }),
})
