import type { ListEntryType } from '../util/entities.js'
import type { NetworkSignals } from './network-signals.js'
import type { ReasonCode, ReasonFamily } from './reasons.js'
import type { AttributeCounts, RuleFacts } from './rules/facts.js'
import type { CustomReason } from './rules/types.js'
import type { ScoringConfig } from './tenant-config.js'

import type { Verdict } from './verdict.js'

export type { Verdict }

/** One fired rule. Evidence holds the raw numbers behind it, never a raw identifier. */
export interface Check {
  /** The family of the reason code (see reasons.ts); `custom` for a tenant rule. */
  check: ReasonFamily | 'custom'
  key: string
  weight: number
  reason: ReasonCode | CustomReason
  message: string
  evidence: Record<string, string | number | boolean | null | string[]>
}

/** Client-reported device flags, exactly as the request carries them. */
export interface DeviceFlags {
  is_headless?: boolean
  ua_consistent?: boolean
  is_emulated?: boolean
  is_noise_injected?: boolean
  is_tampered?: boolean
  is_context_mismatch?: boolean
  is_engine_mismatch?: boolean
  is_os_mismatch?: boolean
  is_font_standardized?: boolean
  antidetect_score?: number
  antidetect_confidence?: 'low' | 'medium' | 'high'
  is_emulator?: boolean
  is_rooted?: boolean
  is_cloned?: boolean
  is_hooked?: boolean
  is_sideloaded?: boolean
  is_adb_enabled?: boolean
  is_mock_location?: boolean
  is_vpn_active?: boolean
  is_debuggable?: boolean
  is_auto_time_off?: boolean
}

/** What the reference data says about the event's IP. */
export interface IpSignals {
  asn: number | null
  org: string | null
  /** Country from offline geolocation. */
  geoCountry: string | null
  isDatacenter: boolean
  datacenterProvider: string | null
  isTor: boolean
  isVpn: boolean
  vpnProvider: string | null
  isProxy: boolean
  isPrivacyRelay: boolean
}

/** What the reference data and DNS say about the event's email. */
export interface EmailSignals {
  domain: string
  isDisposable: boolean
  /** E-mail relay service of the domain; absent in inputs recorded before relays were recognised. */
  relay?: string | null
  looksGibberish: boolean
  gibberishScore: number
  hasPlusTag: boolean
  /** `none` only on a definite DNS answer; `unknown` on timeouts and server failures. */
  mx: 'valid' | 'none' | 'unknown'
}

/** How an IP is classed on a device's timeline; relay hops never count toward session behaviour. */
export type ConnectionClass = 'datacenter' | 'proxy' | 'relay' | 'residential'

/** One point of a device's observation timeline (hashes and classes only). */
export interface DevicePoint {
  ms: number
  ipHash: string | null
  connection: ConnectionClass | null
  /** Set on a watch-mode beacon of the fingerprint (not a scored event: it takes part in session behaviour only). */
  beacon?: true
}

/** What the tenant's history says about the event's resolved device; see docs/device-identity.md. */
export interface DeviceHistory {
  /** 1 = valid device token, 2 = fingerprint, 3 = neither (links nothing). */
  rung: 1 | 2 | 3
  /** Accounts counted for device reuse (token identity at rung 1, raw fingerprint otherwise), including this one. */
  accounts: number
  /** Accounts on this fingerprint and this network prefix, including this one. */
  accountsSameNetwork: number
  /**
   * Accounts on this fingerprint that share the event's canonical mailbox, including this one; set when
   * there are 2 or more (they count undivided, docs/device-identity.md).
   */
  accountsSameMailbox?: number
  /**
   * The fingerprint's accounts, set when they count undivided because its observations show one browser
   * that loses its cookie (docs/device-identity.md, "One browser").
   */
  accountsOneBrowser?: number
  /** Events on the resolved device in the velocity window, including this one. */
  recentEvents: number
  /** This event's point. */
  current: DevicePoint
  /** Earlier observations of the resolved device, newest first. */
  timeline: DevicePoint[]
}

/** Counts from the tenant's event history, each including the event being scored. */
export interface HistorySignals {
  /** Distinct user ids seen from this IP within the velocity window. */
  ipAccounts: number | null
  /** Device history; absent when the event carried neither a fingerprint nor a device token. */
  device?: DeviceHistory | null
  /** Distinct accounts on the event's canonical mailbox, this one included; absent without both. */
  mailboxAccounts?: number | null
  /** The account's earlier events, for takeover; absent for signups and events without an account. */
  account?: AccountHistory | null
  /**
   * The tenant's recent events with machine-generated mailboxes (docs/scoring.md, `gibberish_wave`); read
   * only for an account-creating event whose own mailbox looks generated, else absent.
   */
  generatedMailboxes?: GeneratedMailboxes | null
  /** The tenant's counted attributes this event carries, by key (docs/rules.md); absent without any. */
  attributes?: Record<string, AttributeCounts>
}

/**
 * `gibberish_email` firings on the tenant's events and all its events, from the hourly statistics: in the
 * current clock hour and the five before (`recent`, `recentEvents`, this event included), and in the same
 * six clock hours of each of the seven days before (`sameHours`, `sameHoursEvents`, yesterday first).
 */
export interface GeneratedMailboxes {
  recent: number
  recentEvents: number
  sameHours: number[]
  sameHoursEvents: number[]
}

/** What an account's earlier events say about this one (docs/scoring.md, account takeover). */
export interface AccountHistory {
  /** Earlier events of the account (counted up to a cap). */
  events: number
  /** Time of the oldest of them, and of this event. */
  firstMs: number
  nowMs: number
  /** Whether this event's fingerprint or resolved device appeared on the account; null without a device. */
  deviceSeen: boolean | null
  /** Whether this event's IP country appeared on the account; null without a country. */
  countrySeen: boolean | null
}

export interface ListMatch {
  /** `allow` and `block` decide; any other name is a named list only rules read. */
  list: string
  type: ListEntryType
  /** For an `attribute` entry: the key of the event's hashed attribute whose value it matched. */
  attribute?: string
}

/** What the TLS fingerprint (JA4) of the connection of the device's beacon says. */
export interface TlsSignals {
  ja4: string
  /** The non-browser client whose JA4 this is (`device.ja4_known_tool`), or null. */
  knownTool: string | null
  /** The JA4's beacon counts when the deployment's data flags it as a spoofing signature, else null. */
  spoofSignature: { sessions: number; spoofing: number; minSessions: number; minShare: number } | null
}

/** Everything the engine needs; gathered by the service layer, so the engine does no I/O. */
export interface EngineInput {
  config: ScoringConfig
  lists: ListMatch[]
  eventCountry: string | null
  /** The caller-supplied IP country (e.g. from a CDN header). */
  ipCountry: string | null
  ip: IpSignals | null
  email: EmailSignals | null
  device: DeviceFlags | null
  /** Browser time zone and the countries that use it (null when unknown or country-less, like UTC). */
  timezone: { zone: string; countries: string[] | null } | null
  history: HistorySignals
  /** The JA4 of the device's joined beacon; absent or null without one. */
  tls?: TlsSignals | null
  /** Operator-network signals; absent when not gathered. */
  network?: NetworkSignals
  /** What tenant rules read beyond the signals above; absent on events recorded before rules existed. */
  facts?: RuleFacts
}

export interface EngineResult {
  score: number
  verdict: Verdict
  reasons: (ReasonCode | CustomReason)[]
  checks: Check[]
  /** Ids of the tenant's shadow rules whose condition held (never part of the decision). */
  shadow?: string[]
}

/** A check family: a pure function from the input to the checks it fires, in firing order. */
export type CheckFamily = (input: EngineInput) => Check[]
