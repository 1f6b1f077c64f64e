import { Redis } from 'ioredis'
import { randomToken } from '../../src/util/secrets.js'
import { missing } from './capabilities.js'

export const REDIS_URL = process.env['VERDICT_TEST_REDIS'] ?? 'redis://127.0.0.1:6379/0'

let available: Promise<boolean> | undefined

/** Whether Redis answers at REDIS_URL. CI (VERDICT_REQUIRE_ALL / _REDIS) fails when it does not. */
export function redisAvailable(): Promise<boolean> {
  available ??= (async () => {
    const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2000 })
    client.on('error', () => {})
    try {
      await client.connect()
      await client.ping()
      return true
    } catch (err) {
      return missing(
        'redis',
        `not reachable at ${REDIS_URL} (set VERDICT_TEST_REDIS): ${(err as Error).message}`,
      )
    } finally {
      client.disconnect()
    }
  })()
  return available
}

/** A key prefix of its own per test, so tests sharing the server never see each other's keys. */
export const testPrefix = () => `vt_${randomToken(10).toLowerCase()}`
