import type { Check, CheckFamily } from '../types.js'
import { fire } from './fire.js'

/**
 * The TLS fingerprint (JA4) of the connection the device's beacon came over. Both codes are device
 * integrity and neither reaches the default block threshold alone:
 * - `forged_beacon` (45): the JA4 is a known non-browser client's (`device.ja4_known_tool`). Every beacon
 *   claims a browser, since only the page script sends one, so a beacon over curl's TLS was made up.
 * - `known_spoof_signature` (35): the deployment's own beacons with this JA4 are predominantly spoofing.
 *   Never together with `forged_beacon`: the flagged set leaves known tools out, and so does this rule,
 *   so that the two together cannot block alone.
 */
export const tlsFingerprint: CheckFamily = (input) => {
  const t = input.tls
  if (!t) return []
  const out: Check[] = []
  if (t.knownTool !== null) {
    out.push(
      fire('forged_beacon', {
        key: 'forged_beacon',
        weight: input.config.weights.forgedBeacon,
        message: `The browser beacon came over the TLS connection of ${t.knownTool}, not of a browser.`,
        evidence: { ja4: t.ja4, tool: t.knownTool },
      }),
    )
  } else if (t.spoofSignature) {
    const s = t.spoofSignature
    out.push(
      fire('known_spoof_signature', {
        key: 'known_spoof_signature',
        weight: input.config.weights.knownSpoofSignature,
        message: 'Most beacons seen with this TLS fingerprint came from spoofed browsers.',
        evidence: {
          ja4: t.ja4,
          sessions: s.sessions,
          spoofing: s.spoofing,
          share: Math.round((s.spoofing / s.sessions) * 1000) / 1000,
          min_sessions: s.minSessions,
          min_share: s.minShare,
        },
      }),
    )
  }
  return out
}
