/** Kind of line, libphonenumber's number types in lower snake case. */
export type LineType =
  | 'mobile'
  | 'fixed_line'
  | 'fixed_line_or_mobile'
  | 'voip'
  | 'toll_free'
  | 'premium_rate'
  | 'shared_cost'
  | 'personal_number'
  | 'pager'
  | 'uan'
  | 'voicemail'

/**
 * Why a number is not valid. `invalid_length` is a length between the shortest and longest the country
 * allows that no number range actually uses; `invalid` is a plausible length outside every known range.
 */
export type PhoneRejectReason =
  | 'not_a_number'
  | 'invalid_country'
  | 'too_short'
  | 'too_long'
  | 'invalid_length'
  | 'invalid'

export interface PhoneAnalysis {
  /** The number belongs to a range the numbering plan assigns. */
  valid: boolean
  /** The length fits the country's plan (weaker than `valid`). */
  possible: boolean
  /** `+` and digits; null when the length does not fit the plan or nothing could be parsed. */
  e164: string | null
  /** Null when the number is not valid. */
  lineType: LineType | null
  /** ISO 3166-1 alpha-2 of the number's region; null for non-geographic codes (+800, +882, …) or when unknown. */
  country: string | null
  isVoip: boolean
  /** Seen on a public receive-SMS site (see `PhoneIntel.disposableKnown`). */
  isDisposable: boolean
  /** Operator the range was originally allocated to; not the current one after porting. */
  carrier: string | null
  /** Null when `valid`. */
  rejectReason: PhoneRejectReason | null
}

/** One offline data set, as reported by the health endpoint. */
export interface DataSourceInfo {
  /** Stable key, e.g. `phone-carrier`. */
  id: string
  /** Human-readable name of the data set and the package that ships it. */
  name: string
  /** Package version the data came from. */
  version: string | null
  /** Newest date the data itself states, ISO `YYYY-MM-DD`; null when the source gives none. */
  date: string | null
  entries: number
  licence: string
  /** False when the data could not be read at start-up; the feature then answers as "unknown". */
  loaded: boolean
}
