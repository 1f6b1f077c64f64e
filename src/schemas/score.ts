import { type Static, Type } from '@fastify/type-provider-typebox'
import { REASONS, type ReasonCode as ReasonCodeName } from '../scoring/reasons.js'
import { NullableScalar, StrEnum, Strict, Verdict } from './common.js'

const Str = (maxLength: number, description: string) => Type.Optional(Type.String({ maxLength, description }))
const Flag = (description: string) => Type.Optional(Type.Boolean({ description }))

export const DeviceFlags = Strict(
  {
    is_headless: Flag('automated or headless browser'),
    ua_consistent: Flag('false when the claimed OS does not match the real device'),
    is_emulated: Flag('software/VM GPU or farm-grade hardware'),
    is_noise_injected: Flag('canvas/WebGL readback varies within the session'),
    is_tampered: Flag('a native fingerprinting API was overridden'),
    is_context_mismatch: Flag('identity differs between page and web worker'),
    is_engine_mismatch: Flag('JS engine contradicts the user agent'),
    is_os_mismatch: Flag('an OS-truth signal contradicts the user agent'),
    is_font_standardized: Flag('fonts standardised by a privacy-hardened browser (informational)'),
    antidetect_score: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
    antidetect_confidence: Type.Optional(StrEnum(['low', 'medium', 'high'] as const)),
    is_emulator: Flag('mobile: emulator'),
    is_rooted: Flag('mobile: rooted or jailbroken'),
    is_cloned: Flag('mobile: cloned app'),
    is_hooked: Flag('mobile: hooking framework'),
    is_sideloaded: Flag('mobile: installed outside the store'),
    is_adb_enabled: Flag('mobile: USB debugging on'),
    is_mock_location: Flag('mobile: mocked location'),
    is_vpn_active: Flag('mobile: VPN active'),
    is_debuggable: Flag('mobile: debuggable build'),
    is_auto_time_off: Flag('mobile: automatic time off'),
  },
  { title: 'DeviceFlags', description: 'client-reported device flags' },
)
// Its static type is the engine's DeviceFlags (src/scoring/types.ts): test/schemas/types.test.ts.

/** One of the caller's own fields (docs/rules.md, "Event attributes"). */
const AttributeValue = Type.Union([
  Type.String({ maxLength: 256 }),
  Type.Number(),
  Type.Boolean(),
  Type.Array(Type.String({ maxLength: 256 }), { maxItems: 16 }),
])

export const ATTRIBUTE_KEY = '^[a-z][a-z0-9_]{0,39}$'

export const Attributes = Type.Record(Type.String({ pattern: ATTRIBUTE_KEY }), AttributeValue, {
  maxProperties: 32,
  additionalProperties: false,
  description:
    'your own fields (amount, currency, card BIN, plan...) for your rules: at most 32 keys of lower-case letters, digits and _ (up to 40 characters); values a string of up to 256 characters, a number, a boolean or up to 16 strings',
})

export const ScoreRequest = Strict(
  {
    event: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'event name, e.g. signup, login, checkout',
    }),
    user_id: Str(256, 'your id of the account'),
    ip: Str(45, 'IP address of the end user'),
    email: Str(320, 'email address'),
    device_id: Str(256, 'raw browser fingerprint from the beacon'),
    device_token: Str(512, 'device_token returned by an earlier call'),
    visit_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[\\x21-\\x7e]+$',
        description:
          "the visit_id the beacon answer gave the page: binds the score to that beacon (same device_id, last 30 minutes, same IP or its /24 (IPv4) or /64 (IPv6)); without it only a beacon from the score IP's network is used",
      }),
    ),
    device: Type.Optional(DeviceFlags),
    timezone: Str(64, 'IANA time zone of the browser'),
    phone: Str(32, 'phone number'),
    phone_country: Str(8, 'ISO country for a national-format phone number'),
    event_country: Str(8, 'ISO country the event is expected from'),
    ip_country: Str(8, 'ISO country of the IP as your CDN reports it'),
    source: Str(64, 'traffic source'),
    site: Str(256, 'site or app'),
    campaign: Str(256, 'campaign'),
    affiliate: Str(256, 'affiliate'),
    link: Str(512, 'link'),
    attributes: Type.Optional(Attributes),
  },
  {
    title: 'ScoreRequest',
    description: 'One event to score: its name and whatever identifiers of the user you have',
    examples: [
      {
        event: 'signup',
        user_id: 'u-1042',
        ip: '203.0.113.7',
        email: 'ada.lovelace@example.com',
        device_id: 'a3f1c9e2b7d44e0f9a6b5c8d7e2f1a0b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f',
        phone: '+14155552671',
        attributes: { plan: 'pro', amount: 49.5 },
      },
    ],
  },
)

/** The closed list of built-in reason codes (docs/reasons.md). */
export const ReasonCode = StrEnum(
  REASONS.map((r) => r.code) as ReasonCodeName[],
  'a built-in reason code',
  'ReasonCode',
)

/** A reason: a built-in code, or `rule:<id>` for a tenant rule (docs/rules.md). */
export const Reason = Type.Union(
  [
    ReasonCode,
    Type.String({
      pattern: '^rule:[a-z0-9_]{1,40}$',
      description: 'the reason code of a tenant rule: rule:<id>',
    }),
  ],
  { title: 'Reason' },
)

const Check = Type.Object(
  {
    check: Type.String({ description: 'the check that fired' }),
    key: Type.String(),
    weight: Type.Number({ description: 'points it added to the score (negative for allow signals)' }),
    reason: Reason,
    message: Type.String(),
    evidence: Type.Record(Type.String(), Type.Unknown()),
  },
  {
    title: 'Check',
    description: 'A check that fired, with its weight and evidence',
    examples: [
      {
        check: 'ip',
        key: 'datacenter_ip',
        weight: 25,
        reason: 'datacenter_ip',
        message: 'IP belongs to a hosting provider',
        evidence: { asn: 16509, org: 'Amazon' },
      },
    ],
  },
)

/** An integrity flag the request's `device` object carried, echoed; null when it was not sent. */
const Reported = (flag: keyof typeof DeviceFlags.properties) =>
  NullableScalar(
    Type.Boolean({
      description: `device.${flag} as sent, completed by the device's beacon of the last 30 minutes; null when neither has it`,
    }),
  )

/** The score response's `device` object: who the device is, how sure that is, and what it reported. */
export const DeviceProfile = Type.Object(
  {
    id: NullableScalar(Type.String({ description: 'raw fingerprint (device_id); collides across people' })),
    resolved_id: Type.String({ description: 'the resolved device identity; link visits on this' }),
    resolution: StrEnum(['deterministic', 'probabilistic'] as const),
    resolution_rung: Type.Integer({
      minimum: 1,
      maximum: 3,
      description: '1 token, 2 fingerprint, 3 neither',
    }),
    collision_risk: Type.Number({ minimum: 0, maximum: 1 }),
    risk_measured: Type.Boolean(),
    token_rejected: NullableScalar(StrEnum(['malformed', 'bad_signature', 'expired'] as const)),
    account_count: Type.Integer({ minimum: 0 }),
    account_count_same_network: Type.Integer({ minimum: 0 }),
    distinct_ips: Type.Integer({ minimum: 0 }),
    unique: Type.Boolean(),
    connection_type: NullableScalar(StrEnum(['datacenter', 'residential'] as const)),
    os: NullableScalar(Type.String()),
    browser: NullableScalar(Type.String()),
    mobile: NullableScalar(Type.Boolean()),
    is_headless: Reported('is_headless'),
    ua_consistent: Reported('ua_consistent'),
    is_emulated: Reported('is_emulated'),
    is_noise_injected: Reported('is_noise_injected'),
    is_tampered: Reported('is_tampered'),
    is_context_mismatch: Reported('is_context_mismatch'),
    is_engine_mismatch: Reported('is_engine_mismatch'),
    is_os_mismatch: Reported('is_os_mismatch'),
    timezone: NullableScalar(Type.String()),
    ja4: Type.Boolean(),
    ja4_known_tool: NullableScalar(Type.String()),
  },
  { title: 'DeviceProfile' },
)
export type DeviceProfile = Static<typeof DeviceProfile>

export const ScoreResponse = Type.Object(
  {
    event_id: Type.String({ format: 'uuid' }),
    score: Type.Number({ minimum: 0, maximum: 100 }),
    verdict: Verdict,
    reasons: Type.Array(Reason),
    reason_text: Type.String(),
    checks: Type.Array(Check),
    device: Type.Optional(DeviceProfile),
    device_token: Type.Optional(Type.String()),
    identity: Type.Optional(
      Type.Object({
        email_canonical: Type.Union([Type.String(), Type.Null()]),
        email_is_aliased: Type.Boolean(),
        email_alias_tricks: Type.Array(Type.String()),
      }),
    ),
    warnings: Type.Optional(Type.Array(Type.String())),
  },
  {
    additionalProperties: true,
    title: 'ScoreResponse',
    examples: [
      {
        event_id: '0b6e4f7c-3d1a-4f5e-9c2b-8a7d6e5f4c3b',
        score: 35,
        verdict: 'allow',
        reasons: ['datacenter_ip'],
        reason_text: 'The IP address belongs to a hosting provider.',
        checks: [
          {
            check: 'ip',
            key: 'datacenter_ip',
            weight: 25,
            reason: 'datacenter_ip',
            message: 'IP belongs to a hosting provider',
            evidence: { asn: 16509, org: 'Amazon' },
          },
        ],
        warnings: [],
      },
    ],
  },
)
export type ScoreResponse = Static<typeof ScoreResponse>

export const BatchScoreBody = Strict(
  { rows: Type.Array(ScoreRequest, { minItems: 1, maxItems: 1000 }) },
  { title: 'BatchScoreRequest' },
)
export const BatchScoreResponse = Type.Object(
  { results: Type.Array(ScoreResponse) },
  { title: 'BatchScoreResponse', description: 'One result per row, in the order of the rows' },
)
