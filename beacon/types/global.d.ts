/** The classic build (verdict.js, a plain <script>) defines the global `Verdict`. */
declare global {
  const Verdict: typeof import('./verdict.js').default
}

export {}
