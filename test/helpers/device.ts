import { expect } from 'vitest'
import { verifyDeviceToken } from '../../src/services/devices/device-token.js'
import type { Harness } from './build.js'

/** POST /v1/score, which must answer 200: the response body. */
export async function scoreOk<T>(
  h: Harness,
  headers: Record<string, string>,
  payload: { event: string } & Record<string, unknown>,
): Promise<T> {
  const res = await h.app.inject({ method: 'POST', url: '/v1/score', headers, payload })
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

/** The device identity a response's device token carries; throws when the token is unusable. */
export function carriedIdentity(h: Harness, tenantId: string, deviceToken: string): string {
  const check = verifyDeviceToken(h.hasher, tenantId, deviceToken, h.clock.now())
  if (!check.ok) throw new Error(`unusable token: ${check.reason}`)
  return check.identity
}
