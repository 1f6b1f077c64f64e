import type { Static } from '@fastify/type-provider-typebox'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { DeviceFlags as DeviceFlagsSchema, DeviceProfile } from '../../src/schemas/score.js'
import type { DeviceFlags } from '../../src/scoring/types.js'

/** Types declared once: where a schema and a TypeScript type describe one thing, they are one type. */
describe('schema types', () => {
  it("the score request's device flags are the engine's DeviceFlags (checked by the type checker)", () => {
    expectTypeOf<Static<typeof DeviceFlagsSchema>>().toEqualTypeOf<DeviceFlags>()
  })

  it('the device profile echoes every integrity flag the engine reads from the request', () => {
    const echoed = Object.keys(DeviceProfile.properties).filter((k) => k in DeviceFlagsSchema.properties)
    expect(echoed).toEqual([
      'is_headless',
      'ua_consistent',
      'is_emulated',
      'is_noise_injected',
      'is_tampered',
      'is_context_mismatch',
      'is_engine_mismatch',
      'is_os_mismatch',
    ])
  })
})
