import type { TenantContext } from '../../context.js'
import { ApiError, notFound } from '../../errors.js'
import { score } from '../../scoring/engine.js'
import { replayInput } from '../../scoring/recorded.js'
import type { Verdict } from '../../scoring/types.js'
import { configOfVersion } from '../rules/tenant-config.js'

export interface Decision {
  score: number
  verdict: Verdict
  reasons: string[]
}

export interface Replay {
  recorded: Decision
  replayed: Decision
  identical: boolean
  config_version: number
  rules_version: string
}

/**
 * Decides a recorded event again from its recorded input under the configuration of its config version.
 * Identical means the same score, verdict, reason codes and checks (messages and evidence included).
 */
export async function replayEvent(
  ctx: Pick<TenantContext, 'store' | 'tenant'> & Partial<Pick<TenantContext, 'hasher'>>,
  eventId: string,
): Promise<Replay> {
  const d = await ctx.store.decisions.one(ctx.tenant.id, eventId)
  if (!d) throw notFound(`no event ${eventId}`)
  if (d.inputs === null || d.configVersion === null || d.rulesVersion === null) {
    throw new ApiError(
      'unprocessable',
      'this event was recorded before decisions kept their inputs, so it cannot be replayed',
    )
  }
  const config = await configOfVersion(ctx, d.configVersion)
  if (!config) {
    throw new ApiError('unprocessable', `config version ${d.configVersion} of this event is not stored`)
  }
  const result = score(replayInput(d.inputs, config))
  const recorded: Decision = { score: d.score, verdict: d.verdict as Verdict, reasons: d.reasons }
  const replayed: Decision = { score: result.score, verdict: result.verdict, reasons: result.reasons }
  // Checks are compared in the form the event stored them in.
  const identical =
    recorded.score === replayed.score &&
    recorded.verdict === replayed.verdict &&
    JSON.stringify(recorded.reasons) === JSON.stringify(replayed.reasons) &&
    JSON.stringify(result.checks) === d.checks
  return { recorded, replayed, identical, config_version: d.configVersion, rules_version: d.rulesVersion }
}
