/** How this node shares state with the others, as `/v1/health` reports it. */
export interface ClusterReport {
  /** A random id per process, so an operator can tell the nodes' answers apart. */
  node: string
  /** `cluster`: rate limits are shared by every node through Redis; `node`: each process limits alone. */
  limits: 'cluster' | 'node'
  redis: 'ok' | 'unreachable' | 'not_configured'
  /** Why Redis is not usable, when it is configured and is not. */
  problem: string | null
  /** The `cluster` background jobs this node holds the lease of. */
  jobs: string[]
}

export type ClusterStatus = () => ClusterReport

/** One process on its own (tests, the default without REDIS_URL). */
export const singleNode =
  (node: string, jobs: () => string[] = () => []): ClusterStatus =>
  () => ({ node, limits: 'node', redis: 'not_configured', problem: null, jobs: jobs() })

/** Nodes sharing a Redis: limits are cluster-wide while it answers, per node (limit / nodes) while not. */
export const redisNodes =
  (node: string, redis: { problem: string | null }, jobs: () => string[]): ClusterStatus =>
  () => {
    const problem = redis.problem
    return {
      node,
      limits: problem ? 'node' : 'cluster',
      redis: problem ? 'unreachable' : 'ok',
      problem,
      jobs: jobs(),
    }
  }
