import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import { createExplainer } from '../src/ai/index.js'
import type { ExplanationInput } from '../src/ai/types.js'
import { loadSettings } from '../src/config/settings.js'

const REPLY = {
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 0,
  model: 'bench',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'The event was flagged because many accounts used one connection. Nothing else stood out.',
        refusal: null,
      },
      finish_reason: 'stop',
    },
  ],
}

function input(weight: number): ExplanationInput {
  return {
    verdict: 'review',
    score: 55,
    thresholds: { review: 40, block: 70 },
    checks: [
      {
        check: 'velocity',
        key: 'ipVelocityMed',
        weight,
        reason: 'ip_velocity',
        message: '7 different accounts used this IP address in the last 10 minutes.',
        evidence: { accounts: 7, window_minutes: 10, threshold: 5, tier: 'medium' },
      },
    ],
    fallback: 'Flagged for review.',
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? 0
}

/**
 * Latency the AI layer adds to one score: a cache miss against a loopback OpenAI-protocol provider that
 * answers at once (so this is our own overhead plus one local HTTP round trip), and a cache hit.
 */
export async function benchAi(misses = 300, hits = 20_000): Promise<{ missMs: number; hitMs: number }> {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(REPLY))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const { port } = server.address() as AddressInfo
    const { ai: config } = loadSettings({
      OPENAI_API_KEY: 'bench',
      OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
      VERDICT_AI_CACHE_SIZE: String(misses + 100),
    })
    const ai = createExplainer(config)
    // Warm up the connection pool and the JIT before measuring.
    for (let i = 0; i < 20; i++) await ai.explain(input(1000 + i))
    const missTimes: number[] = []
    for (let i = 0; i < misses; i++) {
      const t = performance.now()
      const out = await ai.explain(input(i))
      missTimes.push(performance.now() - t)
      if (out.source !== 'ai') throw new Error(`bench miss was answered by ${out.source}`)
    }
    const hit = input(0)
    const t = performance.now()
    for (let i = 0; i < hits; i++) await ai.explain(hit)
    const hitMs = (performance.now() - t) / hits
    return { missMs: median(missTimes), hitMs }
  } finally {
    server.closeAllConnections()
    server.close()
  }
}
