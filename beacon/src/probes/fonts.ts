/** Installed fonts, found by measuring text: a font that is present changes the width of its fallback. */

/** Fonts that ship with one operating system only (and are not aliased to another font elsewhere). */
export const OS_FONTS = {
  windows: [
    'Segoe UI',
    'Marlett',
    'Segoe MDL2 Assets',
    'Ebrima',
    'Gadugi',
    'Nirmala UI',
    'MV Boli',
    'Javanese Text',
    'Malgun Gothic',
    'Microsoft Himalaya',
  ],
  apple: [
    'Menlo',
    'Geneva',
    'Lucida Grande',
    'Avenir Next',
    'Apple SD Gothic Neo',
    'PingFang SC',
    'Hiragino Sans',
    'Noteworthy',
    'Apple Chancery',
    'Chalkboard SE',
  ],
  linux: [
    'DejaVu Sans',
    'Liberation Sans',
    'Liberation Mono',
    'Ubuntu',
    'Cantarell',
    'Noto Sans',
    'FreeSans',
    'Nimbus Sans',
    'Bitstream Vera Sans',
    'Droid Sans',
  ],
}

/** Widely installed fonts whose presence varies between machines: fingerprint only. Kept short: on Linux
 * each unknown family costs a fontconfig lookup (about 1 ms) the first time a page asks. */
const COMMON_FONTS = [
  'Arial',
  'Arial Black',
  'Calibri',
  'Cambria',
  'Comic Sans MS',
  'Consolas',
  'Courier New',
  'Georgia',
  'Impact',
  'Tahoma',
  'Times New Roman',
  'Trebuchet MS',
  'Verdana',
  'Helvetica',
  'Helvetica Neue',
  'Futura',
  'Gill Sans',
  'Palatino',
  'Century Gothic',
  'Lucida Console',
  'Wingdings',
  'MS Gothic',
  'SimSun',
  'Roboto',
  'Open Sans',
]

const BASES = ['monospace', 'sans-serif', 'serif']
const SAMPLE = 'mmmmmmmmmmlli1WW@#'

/** The names of the installed fonts among every font listed here. */
export function probeFonts(): Set<string> {
  const found = new Set<string>()
  const ctx = document.createElement('canvas').getContext('2d')
  if (!ctx) return found
  const width = (font: string) => {
    ctx.font = `72px ${font}`
    return ctx.measureText(SAMPLE).width
  }
  const base = BASES.map(width)
  const all = [...OS_FONTS.windows, ...OS_FONTS.apple, ...OS_FONTS.linux, ...COMMON_FONTS]
  for (const name of all) {
    if (BASES.some((b, i) => width(`"${name}", ${b}`) !== base[i])) found.add(name)
  }
  return found
}

export function countPresent(found: Set<string>, names: string[]): number {
  let n = 0
  for (const name of names) if (found.has(name)) n++
  return n
}
