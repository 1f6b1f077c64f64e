/** Installed fonts, found by measuring text: a font that is present changes the width of its fallback. */

/**
 * Each family costs one platform font lookup the first time a page asks (on Linux a fontconfig match in
 * the browser process, about 1 ms, one at a time): the lists are kept to the families that tell most.
 */

/** Fonts that ship with one operating system only (and are not aliased to another font elsewhere). */
export const OS_FONTS = {
  windows: ['Segoe UI', 'Marlett', 'Ebrima', 'Gadugi', 'Nirmala UI', 'Malgun Gothic'],
  apple: ['Menlo', 'Geneva', 'Lucida Grande', 'Avenir Next', 'PingFang SC', 'Hiragino Sans'],
  linux: ['DejaVu Sans', 'Liberation Sans', 'Liberation Mono', 'Ubuntu', 'Cantarell', 'Noto Sans'],
}

/** Fonts whose presence varies between machines of one OS (Office, Adobe, language packs, user installs). */
const COMMON_FONTS = [
  'Arial Black',
  'Calibri',
  'Cambria',
  'Consolas',
  'Comic Sans MS',
  'Georgia',
  'Impact',
  'Verdana',
  'Helvetica Neue',
  'Futura',
  'Gill Sans',
  'Century Gothic',
  'Lucida Console',
  'MS Gothic',
  'SimSun',
  'Roboto',
]

export const FONT_NAMES = [...OS_FONTS.windows, ...OS_FONTS.apple, ...OS_FONTS.linux, ...COMMON_FONTS]

type Ctx2d = Pick<CanvasRenderingContext2D, 'font' | 'measureText'>

/**
 * The installed fonts among `names`, measured on a 2D context (a page canvas or a worker's
 * OffscreenCanvas). Self-contained: the worker runs its source text.
 */
export function measureFonts(ctx: Ctx2d, names: string[]): string[] {
  // One monospace and one proportional fallback: a present font differs from at least one of them.
  const bases = ['monospace', 'serif']
  const width = (font: string) => {
    ctx.font = `72px ${font}`
    return ctx.measureText('mmmmmmmmmmlli1WW@#').width
  }
  const base = bases.map(width)
  return names.filter((name) => bases.some((b, i) => width(`"${name}", ${b}`) !== base[i]))
}

/** In the page: when no worker could measure them. */
export function probeFonts(): Set<string> {
  const ctx = document.createElement('canvas').getContext('2d')
  return new Set(ctx ? measureFonts(ctx, FONT_NAMES) : [])
}

export function countPresent(found: Set<string>, names: string[]): number {
  let n = 0
  for (const name of names) if (found.has(name)) n++
  return n
}
