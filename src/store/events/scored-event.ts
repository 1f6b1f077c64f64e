import type { RecordedInput } from '../../scoring/recorded.js'
import type { ConnectionClass, EngineResult } from '../../scoring/types.js'

/** How an event's device was resolved, as its observation row and its links record it. */
export interface ObservedDevice {
  /** The resolved device identity, which is also the identity the returned device token carries. */
  resolvedId: string
  rung: 1 | 2 | 3
  connection: ConnectionClass | null
  /** os/browser from the beacon, when known. */
  platform: string | null
  /**
   * Distinct token identities replayed with the fingerprint before this event (rung 2): 2 or more
   * means the fingerprint is known to collide. Absent at rungs 1 and 3.
   */
  knownDevices?: number
  /** Set when the client reported a standardised (privacy-hardened) fingerprint at rung 2. */
  standardized?: true
  /**
   * The watch session of the visit the score named (services/devices/beacon.ts `beaconSession`): only its
   * beacons are timeline points. Absent: the timeline holds scored events only.
   */
  beaconSession?: string
}

/**
 * What storage keeps of an event besides its outcome: hashes and coarse attributes, never a raw email,
 * IP or phone. Built once per event before the write; the event row, the device observation, the
 * device links and the counters all read this one object.
 */
export interface EventAttributes {
  tenantId: string
  event: string
  userId: string | null
  /** The caller's raw fingerprint (`device_id`), an input rather than an identity. */
  deviceId: string | null
  /** Set when the event carried a fingerprint or a device token: only then is the device observed. */
  device: ObservedDevice | null
  emailHash: string | null
  emailDomain: string | null
  ipHash: string | null
  /** IPv6 only: the keyed hash of the address's /64, the block IP velocity counts under; null for IPv4. */
  ipBlockHash: string | null
  ipPrefix: string | null
  asn: number | null
  ipCountry: string | null
  phoneHash: string | null
  phoneCountry: string | null
}

/** What IP velocity counts accounts under: an IPv6 address's /64, an IPv4 address itself. */
export const velocityKey = (a: EventAttributes): string | null => a.ipBlockHash ?? a.ipHash

/** An event that carried a fingerprint or a device token. */
export type DeviceEvent = EventAttributes & { device: ObservedDevice }

export const carriesDevice = (e: EventAttributes): e is DeviceEvent => e.device !== null

/** A scored event as the write path hands it to storage; the repositories map it to their rows. */
export interface ScoredEvent {
  id: string
  createdMs: number
  attributes: EventAttributes
  result: EngineResult
  /** What the decision can be replayed from: the config version, the rules version and the engine's input. */
  decidedBy: { configVersion: number; rulesVersion: string; input: RecordedInput }
  /** Counts as bad for its ASN's fraud rate (docs/network.md). */
  asnBad: boolean
}
