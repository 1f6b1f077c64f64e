/**
 * Who the simulated customers are: a country with its time zones, names from that locale's faker
 * data, and mail providers people there use. Email local parts follow the forms people pick.
 */
import { allFakers, type Faker } from '@faker-js/faker'
import type { Rng } from './rng.js'

export interface Country {
  code: string
  weight: number
  locale: keyof typeof allFakers
  zones: string[]
  mail: string[]
}

export const COUNTRIES: Country[] = [
  {
    code: 'US',
    weight: 22,
    locale: 'en_US',
    zones: ['America/New_York', 'America/Chicago', 'America/Denver', 'America/Los_Angeles'],
    mail: [
      'gmail.com',
      'yahoo.com',
      'outlook.com',
      'icloud.com',
      'hotmail.com',
      'aol.com',
      'comcast.net',
      'att.net',
    ],
  },
  {
    code: 'CA',
    weight: 4,
    locale: 'en_CA',
    zones: ['America/Toronto', 'America/Vancouver'],
    mail: ['gmail.com', 'hotmail.com', 'outlook.com', 'yahoo.ca', 'rogers.com'],
  },
  {
    code: 'MX',
    weight: 3,
    locale: 'es_MX',
    zones: ['America/Mexico_City'],
    mail: ['gmail.com', 'hotmail.com', 'outlook.com', 'yahoo.com.mx'],
  },
  {
    code: 'BR',
    weight: 5,
    locale: 'pt_BR',
    zones: ['America/Sao_Paulo'],
    mail: ['gmail.com', 'hotmail.com', 'uol.com.br', 'bol.com.br', 'outlook.com'],
  },
  {
    code: 'AR',
    weight: 2,
    locale: 'es',
    zones: ['America/Argentina/Buenos_Aires'],
    mail: ['gmail.com', 'hotmail.com', 'yahoo.com.ar'],
  },
  {
    code: 'GB',
    weight: 8,
    locale: 'en_GB',
    zones: ['Europe/London'],
    mail: ['gmail.com', 'hotmail.co.uk', 'btinternet.com', 'yahoo.co.uk', 'outlook.com', 'icloud.com'],
  },
  {
    code: 'DE',
    weight: 8,
    locale: 'de',
    zones: ['Europe/Berlin'],
    mail: ['gmail.com', 'gmx.de', 'web.de', 't-online.de', 'outlook.de', 'posteo.de'],
  },
  {
    code: 'FR',
    weight: 6,
    locale: 'fr',
    zones: ['Europe/Paris'],
    mail: ['gmail.com', 'orange.fr', 'free.fr', 'laposte.net', 'hotmail.fr', 'sfr.fr'],
  },
  {
    code: 'ES',
    weight: 4,
    locale: 'es',
    zones: ['Europe/Madrid'],
    mail: ['gmail.com', 'hotmail.es', 'yahoo.es', 'outlook.es'],
  },
  {
    code: 'IT',
    weight: 4,
    locale: 'it',
    zones: ['Europe/Rome'],
    mail: ['gmail.com', 'libero.it', 'virgilio.it', 'hotmail.it', 'alice.it'],
  },
  {
    code: 'NL',
    weight: 3,
    locale: 'nl',
    zones: ['Europe/Amsterdam'],
    mail: ['gmail.com', 'hotmail.nl', 'ziggo.nl', 'kpnmail.nl', 'outlook.com'],
  },
  {
    code: 'PL',
    weight: 3,
    locale: 'pl',
    zones: ['Europe/Warsaw'],
    mail: ['gmail.com', 'wp.pl', 'onet.pl', 'interia.pl', 'o2.pl'],
  },
  {
    code: 'SE',
    weight: 2,
    locale: 'sv',
    zones: ['Europe/Stockholm'],
    mail: ['gmail.com', 'hotmail.se', 'outlook.com', 'telia.com'],
  },
  {
    code: 'TR',
    weight: 3,
    locale: 'tr',
    zones: ['Europe/Istanbul'],
    mail: ['gmail.com', 'hotmail.com', 'yandex.com', 'outlook.com'],
  },
  {
    code: 'IN',
    weight: 5,
    locale: 'en_IN',
    zones: ['Asia/Kolkata'],
    mail: ['gmail.com', 'yahoo.co.in', 'rediffmail.com', 'outlook.com'],
  },
  {
    code: 'JP',
    weight: 3,
    locale: 'ja',
    zones: ['Asia/Tokyo'],
    mail: ['gmail.com', 'yahoo.co.jp', 'docomo.ne.jp', 'icloud.com', 'outlook.jp'],
  },
  {
    code: 'KR',
    weight: 2,
    locale: 'ko',
    zones: ['Asia/Seoul'],
    mail: ['naver.com', 'gmail.com', 'daum.net', 'hanmail.net'],
  },
  {
    code: 'ID',
    weight: 2,
    locale: 'id_ID',
    zones: ['Asia/Jakarta'],
    mail: ['gmail.com', 'yahoo.co.id', 'yahoo.com'],
  },
  {
    code: 'PH',
    weight: 2,
    locale: 'en',
    zones: ['Asia/Manila'],
    mail: ['gmail.com', 'yahoo.com', 'outlook.com'],
  },
  {
    code: 'VN',
    weight: 1,
    locale: 'vi',
    zones: ['Asia/Ho_Chi_Minh'],
    mail: ['gmail.com', 'yahoo.com.vn', 'outlook.com'],
  },
  {
    code: 'AU',
    weight: 3,
    locale: 'en_AU',
    zones: ['Australia/Sydney', 'Australia/Melbourne', 'Australia/Perth'],
    mail: ['gmail.com', 'bigpond.com', 'outlook.com', 'icloud.com', 'hotmail.com'],
  },
  { code: 'NG', weight: 1, locale: 'yo_NG', zones: ['Africa/Lagos'], mail: ['gmail.com', 'yahoo.com'] },
  {
    code: 'ZA',
    weight: 1,
    locale: 'af_ZA',
    zones: ['Africa/Johannesburg'],
    mail: ['gmail.com', 'webmail.co.za', 'outlook.com'],
  },
  {
    code: 'RU',
    weight: 2,
    locale: 'ru',
    zones: ['Europe/Moscow'],
    mail: ['yandex.ru', 'mail.ru', 'gmail.com', 'rambler.ru'],
  },
]

/** Romanised names for locales whose faker data is in a script people do not use in mail addresses. */
const ROMANISED: Record<string, { first: string[]; last: string[] }> = {
  ja: {
    first: [
      'haruto',
      'yuto',
      'sota',
      'yui',
      'hina',
      'riko',
      'takeshi',
      'kenji',
      'akiko',
      'naoki',
      'yuki',
      'mei',
      'daiki',
      'ayaka',
      'shota',
      'misaki',
    ],
    last: [
      'sato',
      'suzuki',
      'takahashi',
      'tanaka',
      'watanabe',
      'ito',
      'yamamoto',
      'nakamura',
      'kobayashi',
      'kato',
      'yoshida',
      'yamada',
      'matsumoto',
      'inoue',
      'kimura',
      'hayashi',
    ],
  },
  ko: {
    first: [
      'minjun',
      'seojun',
      'jiwoo',
      'seoyeon',
      'hayoon',
      'jihoo',
      'eunji',
      'hyunwoo',
      'sungmin',
      'jiyeon',
      'dongha',
      'yuna',
    ],
    last: ['kim', 'lee', 'park', 'choi', 'jung', 'kang', 'cho', 'yoon', 'jang', 'lim', 'han', 'shin'],
  },
  ru: {
    first: [
      'aleksandr',
      'dmitry',
      'sergey',
      'anastasia',
      'ekaterina',
      'olga',
      'ivan',
      'nikita',
      'tatiana',
      'mikhail',
      'yulia',
      'andrey',
    ],
    last: [
      'ivanov',
      'smirnova',
      'kuznetsov',
      'popova',
      'sokolov',
      'lebedeva',
      'kozlov',
      'novikova',
      'morozov',
      'volkova',
      'solovyov',
      'vasilieva',
    ],
  },
}

/** ASCII form of a name part as people write it in an address. */
export function ascii(s: string): string {
  return s
    .replace(/ß/g, 'ss')
    .replace(/[øØ]/g, 'o')
    .replace(/[łŁ]/g, 'l')
    .replace(/ı/g, 'i')
    .replace(/[əƏ]/g, 'e')
    .replace(/[đĐ]/g, 'd')
    .replace(/[æÆ]/g, 'ae')
    .normalize('NFD')
    .replace(/[^A-Za-z]/g, '')
    .toLowerCase()
}

const fakers = new Map<string, Faker>()
function fakerFor(locale: keyof typeof allFakers, seed: number): Faker {
  let f = fakers.get(locale)
  if (!f) {
    f = allFakers[locale]
    fakers.set(locale, f)
  }
  f.seed(seed)
  return f
}

export interface Name {
  first: string
  last: string
}

export function nameIn(rng: Rng, c: Country): Name {
  const rom = ROMANISED[c.locale]
  if (rom) return { first: rng.pick(rom.first), last: rng.pick(rom.last) }
  const f = fakerFor(c.locale, rng.int(0x7fffffff))
  const first = ascii(f.person.firstName().split(/[\s-]/)[0]!)
  const last = ascii(f.person.lastName().split(/[\s-]/).pop()!)
  return { first: first || 'alex', last: last || 'lee' }
}

/** A mailbox name of the forms real people choose. */
export function localPart(rng: Rng, n: Name): string {
  const { first: f, last: l } = n
  const year = String(1960 + rng.int(46))
  switch (rng.int(10)) {
    case 0:
      return `${f}.${l}`
    case 1:
      return `${f}${l}`
    case 2:
      return `${f}${l}${year.slice(2)}`
    case 3:
      return `${f[0]}${l}`
    case 4:
      return `${f}_${l}${rng.int(100)}`
    case 5:
      return `${f}.${l}${year}`
    case 6:
      return `${l}.${f}`
    case 7:
      return `${f}${rng.between(1, 999)}`
    case 8:
      return `${f[0]}.${l}`
    default:
      return `${l}${f[0]}${rng.int(10)}`
  }
}

/** E-mail relays that forward to a real mailbox: the address is random by design. */
export function relayAddress(rng: Rng, n: Name): string {
  const words = [
    'cinema',
    'tyre',
    'apple',
    'ocean',
    'violet',
    'bridge',
    'lunar',
    'maple',
    'river',
    'quartz',
    'pebble',
    'falcon',
  ]
  switch (rng.int(5)) {
    case 0:
      return `${rng.pick(words)}_${rng.pick(words)}_${rng.between(10, 99)}@duck.com`
    case 1:
      return `${rng.chars('abcdefghijklmnopqrstuvwxyz0123456789', 9)}@mozmail.com`
    case 2:
      return `${n.first}.${rng.pick(words)}${rng.int(1000)}@simplelogin.com`
    case 3:
      return `${rng.chars('abcdefghijklmnopqrstuvwxyz0123456789', 10)}@privaterelay.appleid.com`
    default:
      // Hide My Email: two dictionary words, a dot and a short suffix.
      return `${rng.pick(words)}-${rng.pick(words)}.${rng.chars('0123456789abcdefghijklmnopqrstuvwxyz', 2)}@icloud.com`
  }
}

export function pickCountry(rng: Rng): Country {
  return rng.weighted(COUNTRIES.map((c) => [c, c.weight] as const))
}

export function countryByCode(code: string): Country {
  return COUNTRIES.find((c) => c.code === code)!
}
