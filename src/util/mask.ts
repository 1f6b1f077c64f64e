/** Display hints for hashed identifiers: enough to recognise an entry, not enough to recover it. */
export function maskEmail(local: string, domain: string): string {
  const keep = local.length <= 2 ? 1 : 2
  return `${local.slice(0, keep)}***@${domain}`
}
