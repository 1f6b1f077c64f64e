import { type TSchema, Type } from '@fastify/type-provider-typebox'
import { CHECKED_KINDS } from '../util/entities.js'
import { Digits, Nullable, StrEnum, Strict } from './common.js'

const open = { additionalProperties: true }

export const EmailField = Type.String({ minLength: 3, maxLength: 320, description: 'email address' })
export const IpField = Type.String({
  minLength: 3,
  maxLength: 45,
  format: 'ip',
  description: 'IPv4 or IPv6 address',
})
export const PhoneField = Type.String({
  minLength: 3,
  maxLength: 32,
  description: 'phone number, international or national format',
})
export const CountryField = Type.String({
  minLength: 2,
  maxLength: 2,
  description: 'ISO 3166 alpha-2 country for national-format numbers',
})

export const Reputation = Type.Object(
  {
    recent_abuse: Type.Boolean(),
    network_risk: Type.Number({ description: '0-1' }),
    network_operators: Type.Integer({ description: 'distinct operators that flagged the entity' }),
    honeypot_hits: Type.Integer({ description: 'abuse-trap hits (IP only)' }),
  },
  open,
)

export const EmailResult = Type.Object(
  {
    fraud_score: Type.Number({ minimum: 0, maximum: 100 }),
    is_disposable: Type.Boolean(),
    mx_valid: Type.Boolean({ description: 'false only when DNS answered that the domain takes no mail' }),
    mx_status: Type.String({
      description:
        'valid, none, unknown (DNS failed) or not_checked (malformed, or a domain outside the public DNS that is never looked up)',
    }),
    catch_all: Type.Boolean(),
    catch_all_probed: Type.Boolean({
      description: 'false unless VERDICT_SMTP_PROBE is on and the probe ran',
    }),
    looks_gibberish: Type.Boolean(),
    has_plus_tag: Type.Boolean(),
    canonical: Nullable(Type.String()),
    is_aliased: Type.Boolean(),
    alias_tricks: Type.Array(Type.String()),
    is_malformed: Type.Boolean(),
    reject_reason: Nullable(Type.String()),
    recent_abuse: Type.Boolean(),
    is_free_provider: Type.Boolean(),
    domain: Nullable(Type.String()),
  },
  open,
)

export const IpResult = Type.Object(
  {
    fraud_score: Type.Number({ minimum: 0, maximum: 100 }),
    is_datacenter: Type.Boolean(),
    datacenter_provider: Nullable(Type.String()),
    is_proxy: Type.Boolean(),
    is_tor: Type.Boolean(),
    is_vpn: Type.Boolean(),
    vpn_provider: Nullable(Type.String()),
    is_privacy_relay: Type.Boolean(),
    country: Nullable(Type.String()),
    city: Nullable(Type.String()),
    isp: Nullable(Type.String({ description: 'the AS organisation name' })),
    asn: Nullable(Type.Integer()),
    recent_abuse: Type.Boolean(),
  },
  open,
)

export const PhoneResult = Type.Object(
  {
    fraud_score: Type.Number({ minimum: 0, maximum: 100 }),
    valid: Type.Boolean(),
    is_voip: Type.Boolean(),
    is_disposable: Type.Boolean(),
    line_type: Nullable(Type.String()),
    country: Nullable(Type.String()),
    carrier: Nullable(Type.String({ description: 'original range holder; number porting is not reflected' })),
    recent_abuse: Type.Boolean(),
    e164: Nullable(Type.String()),
    reject_reason: Nullable(Type.String()),
  },
  open,
)

const Warnings = Type.Optional(Type.Array(Type.String()))

export const EmailCheckResponse = Type.Object({
  email: EmailResult,
  reputation: Reputation,
  summary: Type.String(),
  warnings: Warnings,
})
export const IpCheckResponse = Type.Object({
  ip: IpResult,
  reputation: Reputation,
  summary: Type.String(),
  warnings: Warnings,
})
export const PhoneCheckResponse = Type.Object({
  phone: PhoneResult,
  reputation: Reputation,
  summary: Type.String(),
  warnings: Warnings,
})

/** A batch answers one check response per row, in the order of the rows. */
const results = <T extends TSchema>(row: T) => Type.Object({ results: Type.Array(row) })
export const EmailBatchResponse = results(EmailCheckResponse)
export const IpBatchResponse = results(IpCheckResponse)
export const PhoneBatchResponse = results(PhoneCheckResponse)

export const EmailRow = Strict({ email: EmailField })
export const IpRow = Strict({ ip: IpField })
export const PhoneRow = Strict({ phone: PhoneField, country: Type.Optional(CountryField) })

const rows = <T extends TSchema>(row: T) => Strict({ rows: Type.Array(row, { minItems: 1, maxItems: 1000 }) })
export const EmailBatch = rows(EmailRow)
export const IpBatch = rows(IpRow)
export const PhoneBatch = rows(PhoneRow)

export const CombinedBody = Strict({
  email: Type.Optional(Type.String({ maxLength: 320 })),
  ip: Type.Optional(Type.String({ maxLength: 45, format: 'ip' })),
})
export const CombinedResponse = Type.Object({
  email: Type.Optional(EmailResult),
  ip: Type.Optional(IpResult),
  reputation: Type.Object({ email: Type.Optional(Reputation), ip: Type.Optional(Reputation) }),
  summary: Type.String(),
  warnings: Warnings,
})

export const LookupsQuery = Strict({
  limit: Type.Optional(Digits('page size, at most 200 (default 50)')),
  offset: Type.Optional(Digits('records to skip')),
  kind: Type.Optional(StrEnum(CHECKED_KINDS, 'only this kind of check')),
})

export const LookupView = Type.Object({
  id: Type.String(),
  kind: Type.String(),
  hint: Type.String({ description: 'masked identifier' }),
  valueHash: Type.String({ description: 'keyed hash of the canonical identifier' }),
  fraudScore: Type.Number(),
  createdMs: Type.Integer(),
})

export const LookupsPage = Type.Object({
  lookups: Type.Array(LookupView),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
})
