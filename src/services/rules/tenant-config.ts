import type { TenantContext } from '../../context.js'
import { badRequest } from '../../errors.js'
import type { AttributeSpecs, RuleSpec } from '../../scoring/rules/types.js'
import {
  type ConfigOverrides,
  configProblem,
  effectiveConfig,
  type ScoringConfig,
  type ThresholdKey,
  type WeightKey,
} from '../../scoring/tenant-config.js'
import type { Work } from '../../store/engine/db.js'
import { type Overrides, patched } from '../../store/rules/tenant-config.js'
import { emit } from '../webhooks/events.js'
import { attributeHash } from './attribute-hash.js'
import {
  compileRules,
  type EffectiveConfig,
  effectiveOf,
  type LiteralHash,
  scoringConfig,
} from './compile.js'

export interface ConfigView {
  version: number
  overrides: ConfigOverrides & { rules?: RuleSpec[]; attributes?: AttributeSpecs }
  effective: EffectiveConfig
}

/** At most this many attributes are counted per tenant (each costs writes on every event that has it). */
export const MAX_COUNTED_ATTRIBUTES = 5

export type ConfigPatch = {
  /** A key set to null removes the tenant's override: the default applies again. */
  weights?: Partial<Record<WeightKey, number | null>>
  thresholds?: Partial<Record<ThresholdKey, number | null>>
  /** The whole list of the tenant's rules, replacing the stored one. */
  rules?: RuleSpec[]
  /** The whole map of the tenant's hashed and counted attributes, replacing the stored one. */
  attributes?: AttributeSpecs
}

export interface ConfigVersion {
  id: number
  createdMs: number
  config: EffectiveConfig
}

const view = (version: number, overrides: Overrides): ConfigView => ({
  version,
  overrides: overrides as ConfigOverrides,
  effective: effectiveOf(overrides as ConfigOverrides),
})

/** The effective configuration in one canonical JSON form (key order fixed by the defaults). */
const render = (o: Overrides) => JSON.stringify(effectiveOf(o as ConfigOverrides))

export async function getConfig(ctx: TenantContext): Promise<ConfigView> {
  const c = await ctx.store.config.current(ctx.tenant.id)
  return view(c.version, c.overrides)
}

/** The engine configuration of some overrides; 400 when it is inconsistent or a rule cannot compile. */
const consistent =
  (literalHash: LiteralHash) =>
  (overrides: Overrides): ScoringConfig => {
    const config = effectiveConfig(overrides as ConfigOverrides)
    const problem = configProblem(config)
    if (problem) throw badRequest(problem)
    const counted = Object.entries(overrides.attributes ?? {}).filter(([, a]) => a.counted === true)
    if (counted.length > MAX_COUNTED_ATTRIBUTES)
      throw badRequest(
        `attributes: at most ${MAX_COUNTED_ATTRIBUTES} counted attributes, not ${counted.length} (${counted.map(([k]) => k).join(', ')})`,
      )
    const rules =
      overrides.rules && overrides.rules.length > 0
        ? compileRules(overrides.rules, overrides.attributes, literalHash)
        : []
    return rules.length > 0 ? { ...config, rules } : config
  }

/** The stored overrides with a patch applied (keys not sent keep their value), refused when inconsistent. */
export function mergedConfig(
  overrides: Overrides,
  patch: ConfigPatch,
  literalHash: LiteralHash,
): ScoringConfig {
  const rules = patch.rules ?? overrides.rules
  const attributes = patch.attributes ?? overrides.attributes
  return consistent(literalHash)({
    weights: patched(overrides.weights, patch.weights),
    thresholds: patched(overrides.thresholds, patch.thresholds),
    ...(rules ? { rules } : {}),
    ...(attributes ? { attributes } : {}),
  })
}

/**
 * Applies only the keys sent; the whole change is refused (nothing written) if the result is
 * inconsistent. A change of the effective configuration makes a new version.
 */
export async function updateConfig(ctx: TenantContext, patch: ConfigPatch): Promise<ConfigView> {
  const now = ctx.clock.now()
  let queued = 0
  // The message commits with the version it announces (the webhook outbox).
  const announce = function* (version: number): Work<void> {
    const data = { version, created_ms: now }
    queued += yield* emit(ctx.store.webhookOutbox, ctx.tenant.id, now, 'config.version_created', data)
  }
  const stored = await ctx.store.config.set(
    ctx.tenant.id,
    {
      weights: { ...patch.weights } as Record<string, number | null>,
      thresholds: { ...patch.thresholds } as Record<string, number | null>,
      ...(patch.rules !== undefined ? { rules: patch.rules } : {}),
      ...(patch.attributes !== undefined ? { attributes: patch.attributes } : {}),
    },
    consistent(attributeHash(ctx.hasher, ctx.tenant.id)),
    render,
    now,
    announce,
  )
  if (queued > 0) ctx.webhooks.nudge()
  return view(stored.version, stored.overrides)
}

/**
 * The tenant's config versions, newest first. A tenant that never changed its configuration has only
 * version 0, which is then not stored yet: it is its current configuration since it was created.
 */
export async function listConfigVersions(
  ctx: TenantContext,
  limit: number,
  offset: number,
): Promise<{ versions: ConfigVersion[] }> {
  const rows = await ctx.store.config.versions(ctx.tenant.id, limit, offset)
  const versions = rows.map((r) => ({
    id: r.version,
    createdMs: r.createdMs,
    config: JSON.parse(r.config) as EffectiveConfig,
  }))
  if (rows.length === 0 && offset === 0) {
    const c = await ctx.store.config.current(ctx.tenant.id)
    if (c.version === 0) {
      versions.push({
        id: 0,
        createdMs: ctx.tenant.createdMs,
        config: effectiveOf(c.overrides as ConfigOverrides),
      })
    }
  }
  return { versions }
}

/** The effective configuration a version named; null when the tenant has no such version. */
export async function configOfVersion(
  ctx: Pick<TenantContext, 'store' | 'tenant'> & Partial<Pick<TenantContext, 'hasher'>>,
  version: number,
): Promise<ScoringConfig | null> {
  // Without the hasher (a command line without the secret) only rules hashing no literal compile.
  const hash = ctx.hasher ? attributeHash(ctx.hasher, ctx.tenant.id) : undefined
  const stored = await ctx.store.config.versionConfig(ctx.tenant.id, version)
  if (stored !== null) return scoringConfig(JSON.parse(stored) as EffectiveConfig, hash)
  if (version !== 0) return null
  // Version 0 is stored by the first change; until then it is the tenant's current configuration.
  const c = await ctx.store.config.current(ctx.tenant.id)
  return c.version === 0 ? scoringConfig(effectiveOf(c.overrides as ConfigOverrides), hash) : null
}
