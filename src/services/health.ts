import type { Explainer } from '../ai/index.js'
import type { Intel } from '../intel/index.js'
import type { ClusterStatus } from './cluster.js'
import type { Deps } from './context.js'

export interface HealthDeps extends Deps {
  version: string
  intel: Intel
  explainer: Explainer
  cluster: ClusterStatus
}

/** Liveness for probes and operators: answers even when the database does not (then `degraded`). */
export async function healthReport(deps: HealthDeps) {
  const reachable = await deps.store.db.ping().catch(() => false)
  const cluster = deps.cluster()
  return {
    status: reachable && !cluster.problem ? 'ok' : 'degraded',
    version: deps.version,
    time: deps.clock.now(),
    database: { engine: deps.store.db.dialect, reachable },
    sources: deps.intel.sources(),
    ai: deps.explainer.status(),
    cluster,
  }
}
