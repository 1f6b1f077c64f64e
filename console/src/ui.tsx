import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import type { HttpError } from './api'

/** Loads once per change of `deps`; exposes data, error and a reload. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | null>(null)
  const [error, setError] = useState<HttpError | Error | null>(null)
  const [n, setN] = useState(0)
  useEffect(() => {
    let live = true
    setError(null)
    load().then(
      (d) => live && setData(d),
      (e: Error) => live && setError(e),
    )
    return () => {
      live = false
    }
  }, [...deps, n])
  return { data, error, reload: () => setN((x) => x + 1) }
}

export function Problem({ error }: { error: Error | null }) {
  if (!error) return null
  return (
    <p class="problem" role="alert">
      {error.message}
    </p>
  )
}

export function Loading({ what }: { what: string }) {
  return <p aria-live="polite">Loading {what}…</p>
}

export function Verdict({ v }: { v: string }) {
  return <span class={`verdict verdict-${v}`}>{v}</span>
}

export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · verdict console`
  }, [title])
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        {title}
      </h1>
      {children}
    </section>
  )
}

/** Label and control together, so no control goes without its label. */
export function Field({ label, id, children }: { label: string; id: string; children: ComponentChildren }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
    </div>
  )
}

/** A download of JSON data (a subject export) built in the page, without a server round trip. */
export function downloadJson(name: string, value: unknown): void {
  const url = URL.createObjectURL(new Blob([JSON.stringify(value, null, 2)], { type: 'application/json' }))
  const a = document.createElement('a')
  a.href = url
  a.download = name
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 1000)
}

/**
 * A wide table's own horizontal scroll box. Focusable, so that a keyboard can scroll it (a scrollable
 * region nobody can focus cannot be read without a mouse; axe's scrollable-region-focusable).
 */
export function ScrollBox({ children }: { children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: scrolling by keyboard needs the region to take focus
    <div class="scroll" tabIndex={0}>
      {children}
    </div>
  )
}
