import { currentSession } from './checks/device.js'
import type { ScoringConfig } from './tenant-config.js'
import type { DeviceHistory, DevicePoint, EngineInput } from './types.js'

/**
 * The engine's own version: change it whenever a change to the rules can decide a recorded input
 * differently (a new check, a changed condition, message or default). Replay promises identical
 * decisions only for events recorded under the current value.
 */
export const RULES_VERSION = '2026.11.26.2'

/** An engine input as an event records it: everything but the config, which the event's config version names. */
export type RecordedInput = Omit<EngineInput, 'config'>

/** Keeps what the session-behaviour check reads of a timeline, with the IP hashes renamed per event. */
function recordDevice(d: DeviceHistory): DeviceHistory {
  // Only equality of IP hashes matters to the rules, so each distinct hash becomes a short local name:
  // the record is smaller and holds no hash of another event's address.
  const names = new Map<string, string>()
  const point = (p: DevicePoint): DevicePoint => {
    let ipHash: string | null = null
    if (p.ipHash !== null) {
      ipHash = names.get(p.ipHash) ?? `i${names.size}`
      names.set(p.ipHash, ipHash)
    }
    return p.beacon
      ? { ms: p.ms, ipHash, connection: p.connection, beacon: true }
      : { ms: p.ms, ipHash, connection: p.connection }
  }
  return {
    rung: d.rung,
    accounts: d.accounts,
    accountsSameNetwork: d.accountsSameNetwork,
    ...(d.accountsSameMailbox === undefined ? {} : { accountsSameMailbox: d.accountsSameMailbox }),
    ...(d.accountsOneBrowser === undefined ? {} : { accountsOneBrowser: d.accountsOneBrowser }),
    recentEvents: d.recentEvents,
    current: point(d.current),
    // The rules read only the current session: points before its first gap can never fire anything.
    timeline: currentSession(d).map(point),
  }
}

/** What an event stores of its engine input: decided again with `replayInput`, it gives the same result. */
export function recordInput(input: EngineInput): RecordedInput {
  const { config: _config, history, ...rest } = input
  const device = history.device
  return {
    ...rest,
    history: device ? { ...history, device: recordDevice(device) } : history,
  }
}

/** The engine input of a recorded event under a configuration (its own version's, or a proposed one). */
export function replayInput(recorded: RecordedInput, config: ScoringConfig): EngineInput {
  return { ...recorded, config }
}
