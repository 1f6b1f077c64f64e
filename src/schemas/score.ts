import { Type } from '@fastify/type-provider-typebox'
import { StrEnum, Strict } from './common.js'

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
  { description: 'client-reported device flags' },
)

export const ScoreRequest = Strict({
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
})

const Check = Type.Object({
  check: Type.String(),
  key: Type.String(),
  weight: Type.Number(),
  reason: Type.String(),
  message: Type.String(),
  evidence: Type.Record(Type.String(), Type.Unknown()),
})

export const ScoreResponse = Type.Object(
  {
    event_id: Type.String({ format: 'uuid' }),
    score: Type.Number({ minimum: 0, maximum: 100 }),
    verdict: StrEnum(['allow', 'review', 'block'] as const),
    reasons: Type.Array(Type.String()),
    reason_text: Type.String(),
    checks: Type.Array(Check),
    device: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
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
  { additionalProperties: true },
)

export const BatchScoreBody = Strict({ rows: Type.Array(ScoreRequest, { minItems: 1, maxItems: 1000 }) })
export const BatchScoreResponse = Type.Object({ results: Type.Array(ScoreResponse) })
