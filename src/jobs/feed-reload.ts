import { FEED_NAMES } from '../intel/feeds/catalog.js'
import { readFeedMeta } from '../intel/feeds/store.js'
import type { Job } from './types.js'

/**
 * Picks up feeds refreshed by `verdict feeds update|import` (possibly from another process) by polling
 * their metadata files, which is cheap; the data itself is only re-read when it changed. The first run
 * only notes what is there (the data was loaded at start). An unreadable metadata file fails the run,
 * which is logged and retried on the next poll.
 */
export function feedReloadJob(everyMs: number): Job {
  let started = false
  let last = ''
  return {
    name: 'feed-reload',
    scope: 'node',
    reads: 'the metadata files of the stored feeds (VERDICT_FEEDS_DIR/<name>.json), then changed feeds',
    writes: "this process's in-memory IP feeds",
    intervalMs: everyMs,
    firstRunMs: 0,
    run: async ({ intel, log }) => {
      const first = !started
      started = true
      let now: string
      try {
        const metas = await Promise.all(FEED_NAMES.map((name) => readFeedMeta(intel.ip.feedsDir, name)))
        now = metas.map((m, i) => `${FEED_NAMES[i]}:${m?.fetchedAt ?? null}`).join(',')
      } catch (err) {
        throw new Error(`feed metadata unreadable: ${(err as Error).message}`)
      }
      if (now === last) return
      last = now
      if (first) return
      await intel.ip.reload()
      log.info('reloaded IP feeds')
    },
  }
}
