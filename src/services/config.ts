import type { TenantContext } from '../context.js'
import { badRequest } from '../errors.js'
import {
  type ConfigOverrides,
  configProblem,
  effectiveConfig,
  type ScoringConfig,
  type ThresholdKey,
  type WeightKey,
} from '../scoring/config.js'

export interface ConfigView {
  overrides: ConfigOverrides
  effective: ScoringConfig
}

export async function getConfig(ctx: TenantContext): Promise<ConfigView> {
  const overrides = (await ctx.store.config.overrides(ctx.tenant.id)) as ConfigOverrides
  return { overrides, effective: effectiveConfig(overrides) }
}

/** Applies only the keys sent; the whole change is refused (nothing written) if the result is inconsistent. */
export async function updateConfig(
  ctx: TenantContext,
  patch: { weights?: Partial<Record<WeightKey, number>>; thresholds?: Partial<Record<ThresholdKey, number>> },
): Promise<ConfigView> {
  const merged = (await ctx.store.config.set(
    ctx.tenant.id,
    {
      weights: { ...patch.weights } as Record<string, number>,
      thresholds: { ...patch.thresholds } as Record<string, number>,
    },
    (o) => {
      const problem = configProblem(effectiveConfig(o as ConfigOverrides))
      if (problem) throw badRequest(problem)
    },
  )) as ConfigOverrides
  return { overrides: merged, effective: effectiveConfig(merged) }
}
