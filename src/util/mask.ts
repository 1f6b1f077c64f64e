/** Display hints for hashed identifiers: enough to recognise an entry, not enough to recover it. */
export function maskEmail(local: string, domain: string): string {
  const keep = local.length <= 2 ? 1 : 2
  return `${local.slice(0, keep)}***@${domain}`
}

/** `+44 ••••••89`: the calling code and the last two digits. */
export function maskPhone(e164OrDigits: string): string {
  const digits = e164OrDigits.replace(/\D/g, '')
  if (digits.length <= 4) return '••••'
  return `${e164OrDigits.startsWith('+') ? '+' : ''}${digits.slice(0, digits.length > 10 ? 2 : 1)} ••••••${digits.slice(-2)}`
}
