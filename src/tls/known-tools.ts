/**
 * JA4s of non-browser HTTP clients, with the tool's name: a browser beacon that arrives with one of
 * these was not sent by a browser (`device.ja4_known_tool`, reason `forged_beacon`).
 *
 * Measured, not copied: `node scripts/measure-ja4.mjs` ran each client against verdict's own TLS
 * termination (src/tls/capture.ts) on this project's development machine, Debian 12 (bookworm)
 * x86_64, on 2026-11-23:
 *   curl 7.88.1 (OpenSSL 3.0.19), GNU Wget 1.21.3 (GnuTLS 3.7.9), Python 3.11.7 urllib (OpenSSL 3.0.19),
 *   Node 20.20.2 fetch (undici 6.24.1) and https (OpenSSL 3.0.19).
 * Each appears twice: with SNI (`d`, a host name, how a beacon endpoint is reached) and without (`i`, an
 * IP address). The Node clients also appear with a resumed TLS session (a second connection from the same
 * process adds the pre_shared_key extension); the other tools were run once per process, as scripts are.
 * Headless Chromium 156 driven by Playwright gave t13d1517h2_8daaf6152771_cb7bf5808d99, the same JA4 as
 * the Chrome capture in FoxIO's published test data (sigalg-grease.pcapng): automating a real browser
 * does not change its TLS, so it is not in this table (the beacon's headless checks cover it). Other versions, builds or TLS libraries of these tools have other JA4s; run
 * the script on the machines your traffic comes from to extend the table.
 */
export const KNOWN_TOOLS: ReadonlyMap<string, string> = new Map([
  ['t13d3112h2_e8f1e7e78f70_b26ce05bbdd6', 'curl'],
  ['t13i3111h2_e8f1e7e78f70_b26ce05bbdd6', 'curl'],
  ['t13d291300_723694b0fccc_899037bd0b8c', 'wget'],
  ['t13i291200_723694b0fccc_899037bd0b8c', 'wget'],
  ['t13d1813h1_85036bcba153_d339722ba4af', 'python-urllib'],
  ['t13i1812h1_85036bcba153_d339722ba4af', 'python-urllib'],
  ['t13d5911h1_a33745022dd6_1f22a2ca17c4', 'node-fetch'],
  ['t13i5910h1_a33745022dd6_1f22a2ca17c4', 'node-fetch'],
  ['t13d5912h1_a33745022dd6_dbd39dd1d406', 'node-fetch'],
  ['t13i5911h1_a33745022dd6_dbd39dd1d406', 'node-fetch'],
  ['t13d591000_a33745022dd6_1f22a2ca17c4', 'node-https'],
  ['t13i590900_a33745022dd6_1f22a2ca17c4', 'node-https'],
  ['t13d591100_a33745022dd6_dbd39dd1d406', 'node-https'],
  ['t13i591000_a33745022dd6_dbd39dd1d406', 'node-https'],
])

/** The tool a JA4 belongs to, or null (no JA4, or not a known tool: essentially all browser traffic). */
export function knownTool(ja4: string | null | undefined): string | null {
  return (ja4 && KNOWN_TOOLS.get(ja4)) || null
}
