/** Resolves to `fallback` when `p` has not settled in `ms` (or rejects): a probe must never hang collection. */
export function within<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(fallback), ms)
    p.then(
      (v) => {
        clearTimeout(timer)
        resolve(v)
      },
      () => {
        clearTimeout(timer)
        resolve(fallback)
      },
    )
  })
}

/** Runs a synchronous probe; a browser that throws (blocked API, missing feature) yields `fallback`. */
export function attempt<T>(fn: () => T, fallback: T): T {
  try {
    return fn()
  } catch {
    return fallback
  }
}

/** Loose view of navigator: several fields (deviceMemory, userAgentData, oscpu) are not in every lib.dom. */
export interface LooseNavigator {
  userAgent: string
  appVersion?: string
  platform?: string
  oscpu?: string
  webdriver?: boolean
  languages?: readonly string[]
  language?: string
  hardwareConcurrency?: number
  deviceMemory?: number
  maxTouchPoints?: number
  plugins?: { length: number }
  userAgentData?: { mobile?: boolean; platform?: string; brands?: { brand: string }[] }
}

export const nav = (): LooseNavigator => navigator as unknown as LooseNavigator

/** Lets queued tasks run (the worker's start-up needs the main thread): a message, not a timer, which browsers clamp. */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel()
    port1.onmessage = () => resolve()
    port2.postMessage(0)
  })
}
