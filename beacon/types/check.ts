// Compile-time only (beacon/tsconfig.json, `npm run typecheck`): the published types
// (beacon/types/verdict.d.ts) say what the library's source does. Never bundled.

import type { CollectOptions, CollectResult, WatchOptions } from '../src/api.js'
import type * as Classic from '../src/entry-classic.js'
import type * as Module from '../src/entry-module.js'
import type * as Declared from './verdict.js'

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false

export const typesMatchTheSource: [
  Same<Declared.CollectOptions, CollectOptions>,
  Same<Declared.WatchOptions, WatchOptions>,
  Same<Declared.CollectResult, CollectResult>,
  Same<typeof Declared.collect, typeof Module.collect>,
  Same<typeof Declared.watch, typeof Module.watch>,
  Same<typeof Declared.default, typeof Module.default>,
  Same<typeof Declared.collect, typeof Classic.collect>,
  Same<typeof Declared.watch, typeof Classic.watch>,
] = [true, true, true, true, true, true, true, true]
