import type { Static } from '@fastify/type-provider-typebox'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { BEACON_FLAGS, type BeaconDevice } from '../../src/beacon/contract.js'
import { DeviceFlags as DeviceFlagsSchema, DeviceProfile } from '../../src/schemas/score.js'
import type { DeviceFlags } from '../../src/scoring/types.js'

/** Types declared once: where a schema and a TypeScript type describe one thing, they are one type. */
describe('device flag types', () => {
  it("the score request's device flags are the engine's DeviceFlags (checked by the type checker)", () => {
    expectTypeOf<Static<typeof DeviceFlagsSchema>>().toEqualTypeOf<DeviceFlags>()
    // What the beacon sends is a valid `device` object of a score request.
    expectTypeOf<BeaconDevice>().toExtend<DeviceFlags>()
  })

  it('the device profile echoes exactly the integrity flags the beacon reports', () => {
    const echoed = Object.keys(DeviceProfile.properties).filter((k) => k in DeviceFlagsSchema.properties)
    expect(echoed).toEqual([...BEACON_FLAGS])
  })
})
