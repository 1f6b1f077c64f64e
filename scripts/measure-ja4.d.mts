/** Types of scripts/measure-ja4.mjs, for the tests that import it. */

export interface Ja4Client {
  name: string
  /** A real browser: its JA4 must never be in the known-tool table. */
  browser?: boolean
  /** Resumes TLS sessions within one process (a second request shows another JA4). */
  resumes?: boolean
  version(): Promise<string>
  fetch(url: string, caFile: string, times?: number): Promise<string[]>
}

export interface Ja4Measurement {
  client: string
  skipped?: string
  version?: string
  host?: 'localhost' | '127.0.0.1'
  /** JA4s of two first handshakes, each from a fresh process (or browser context). */
  fresh?: [string, string]
  /** JA4 of a resumed handshake, for clients that resume. */
  resumed?: string
}

export const CLIENTS: Ja4Client[]
export function installed(client: Ja4Client): Promise<string | null>
export function measure(port: number, caFile: string, clients?: Ja4Client[]): Promise<Ja4Measurement[]>
export function selfSignedCertificate(dir: string): Promise<{ certFile: string; keyFile: string }>
