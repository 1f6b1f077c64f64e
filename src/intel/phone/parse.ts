import {
  type CountryCode,
  getCountries,
  isSupportedCountry,
  ParseError,
  type PhoneNumber,
  type PhoneNumberType,
  parsePhoneNumberWithError,
  validatePhoneNumberLength,
} from 'libphonenumber-js/max'
import type { LineType, PhoneAnalysis, PhoneRejectReason } from './types.js'

/** The number facts that need only libphonenumber's metadata; carrier and disposable come on top. */
export interface ParsedPhone extends Omit<PhoneAnalysis, 'isVoip' | 'isDisposable' | 'carrier'> {
  /** Country calling code digits (`44`), null when nothing could be parsed. */
  callingCode: string | null
  /** Digits after the calling code, null when nothing could be parsed. */
  nationalNumber: string | null
}

const LINE_TYPES: Record<PhoneNumberType, LineType> = {
  MOBILE: 'mobile',
  FIXED_LINE: 'fixed_line',
  FIXED_LINE_OR_MOBILE: 'fixed_line_or_mobile',
  VOIP: 'voip',
  TOLL_FREE: 'toll_free',
  PREMIUM_RATE: 'premium_rate',
  SHARED_COST: 'shared_cost',
  PERSONAL_NUMBER: 'personal_number',
  PAGER: 'pager',
  UAN: 'uan',
  VOICEMAIL: 'voicemail',
}

const REASONS: Record<string, PhoneRejectReason> = {
  NOT_A_NUMBER: 'not_a_number',
  INVALID_COUNTRY: 'invalid_country',
  TOO_SHORT: 'too_short',
  TOO_LONG: 'too_long',
  INVALID_LENGTH: 'invalid_length',
}

/**
 * Turns a caller's country hint into a supported region, or undefined. "UK" is not an ISO code but is what
 * people type for the United Kingdom, so it is read as GB.
 */
export function toRegion(country: string | undefined): CountryCode | undefined {
  if (!country) return undefined
  const code = country.trim().toUpperCase()
  const region = code === 'UK' ? 'GB' : code
  return isSupportedCountry(region) ? region : undefined
}

type Attempt = { phone: PhoneNumber } | { reason: PhoneRejectReason }

function attempt(text: string, region: CountryCode | undefined): Attempt {
  try {
    // extract: false makes the whole input the number, so "call me on +44…" is not a number.
    return { phone: parsePhoneNumberWithError(text, { defaultCountry: region, extract: false }) }
  } catch (err) {
    if (err instanceof ParseError) return { reason: REASONS[err.message] ?? 'invalid' }
    throw err
  }
}

function isValid(a: Attempt): boolean {
  return 'phone' in a && a.phone.isValid()
}

function rejected(reason: PhoneRejectReason): ParsedPhone {
  return {
    valid: false,
    possible: false,
    e164: null,
    lineType: null,
    country: null,
    rejectReason: reason,
    callingCode: null,
    nationalNumber: null,
  }
}

function describe(phone: PhoneNumber): ParsedPhone {
  const valid = phone.isValid()
  const possible = phone.isPossible()
  const type = valid ? phone.getType() : undefined
  let rejectReason: PhoneRejectReason | null = null
  if (!valid) {
    const length = validatePhoneNumberLength(phone.number)
    rejectReason = (length && REASONS[length]) || 'invalid'
  }
  return {
    valid,
    possible,
    e164: possible ? phone.number : null,
    lineType: type ? LINE_TYPES[type] : null,
    country: phone.country ?? null,
    rejectReason,
    callingCode: phone.countryCallingCode,
    nationalNumber: phone.nationalNumber,
  }
}

/**
 * Parses a number written in international form (`+44 …`, `0044 …`) or, with a country hint, in that
 * country's national form. Spaces, dashes, dots and parentheses are ignored; an extension is dropped.
 */
export function parsePhone(input: string, country?: string): ParsedPhone {
  const region = toRegion(country)
  // NFKC folds full-width digits and plus signs (common from East Asian input methods) to ASCII.
  const text = input.normalize('NFKC').trim()
  // libphonenumber only understands 00 as "international" when the hint's own exit code is 00, yet people
  // in the US or Australia (011, 0011) write 00 too. Without a hint it can only mean international.
  const plus = text.startsWith('00') ? `+${text.slice(2)}` : null
  let result = attempt(plus && !region ? plus : text, region)
  if (plus && region && !isValid(result)) {
    const alt = attempt(plus, region)
    if (isValid(alt)) result = alt
  }
  return 'phone' in result ? describe(result.phone) : rejected(result.reason)
}

/**
 * Every E.164 number the input can stand for: the input's own reading when it is international, else
 * the valid reading in each region that has one (a national number such as `030 1234567` is a valid
 * number in about twenty countries). Read exactly as parsePhone reads it with that region as hint.
 */
export function phoneReadings(input: string): string[] {
  const own = parsePhone(input)
  if (own.e164) return [own.e164]
  const out = new Set<string>()
  for (const region of getCountries()) {
    const p = parsePhone(input, region)
    if (p.valid && p.e164) out.add(p.e164)
  }
  return [...out].sort()
}
