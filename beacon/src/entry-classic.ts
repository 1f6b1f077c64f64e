import { makeApi } from './api.js'

// Read while the script runs: document.currentScript is null once any callback fires.
const script = document.currentScript as HTMLScriptElement | null
const origin = script?.src ? new URL(script.src).origin : location.origin
const api = makeApi(origin)

/** Exposed as the global `Verdict` by the classic build. */
export const collect = api.collect
export const watch = api.watch
