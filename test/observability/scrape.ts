import parsePrometheusTextFormat from 'parse-prometheus-text-format'

export type Families = ReturnType<typeof parsePrometheusTextFormat> & { text: string }

/** Parses an exposition with a Prometheus text-format parser (it throws on a malformed one). */
export function parseExposition(text: string): Families {
  return Object.assign(parsePrometheusTextFormat(text), { text })
}

/**
 * The observation count of a histogram's series matching `labels`, read from its `_count` samples.
 * The parser merges a histogram's series into one when `le` is not the last label (prom-client puts it
 * first), so their labels and counts are read from the text instead.
 */
export function histogramCount(
  families: Families,
  name: string,
  labels: Record<string, string> = {},
): number {
  let sum = 0
  for (const line of families.text.split('\n')) {
    const m = new RegExp(`^${name}_count(?:\\{(.*)\\})? (\\S+)$`).exec(line)
    if (!m) continue
    const got = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]))
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) sum += Number(m[2])
  }
  return sum
}

/** The sum of a family's sample values (counters, gauges) or counts (histograms) matching `labels`. */
export function total(families: Families, name: string, labels: Record<string, string> = {}): number {
  const family = families.find((f) => f.name === name)
  if (!family) return 0
  let sum = 0
  for (const m of family.metrics) {
    if (!Object.entries(labels).every(([k, v]) => m.labels?.[k] === v)) continue
    sum += Number(m.value ?? m.count ?? 0)
  }
  return sum
}

/** Every label value of every sample line (histograms included, which the parser merges). */
export function labelValues(families: Families): string[] {
  return families.text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .flatMap((l) => [...l.matchAll(/\w+="((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!))
}
