/** Canvas 2D: the rendering fingerprint and the noise test (a readback that changes, or a solid fill that reads back wrong). */

function draw(): HTMLCanvasElement | null {
  const c = document.createElement('canvas')
  c.width = 240
  c.height = 60
  const ctx = c.getContext('2d')
  if (!ctx) return null
  ctx.textBaseline = 'alphabetic'
  ctx.fillStyle = '#f60'
  ctx.fillRect(100, 1, 62, 20)
  ctx.fillStyle = '#069'
  ctx.font = '11pt "Times New Roman", serif'
  ctx.fillText('Verdict beacon, \u{1F603} <canvas> 1.0', 2, 15)
  ctx.fillStyle = 'rgba(102, 204, 0, 0.7)'
  ctx.font = '18pt Arial, sans-serif'
  ctx.fillText('Cwm fjordbank glyphs vext quiz', 4, 45)
  ctx.globalCompositeOperation = 'multiply'
  for (const [colour, x] of [
    ['#f2f', 40],
    ['#2ff', 80],
    ['#ff2', 60],
  ] as const) {
    ctx.fillStyle = colour
    ctx.beginPath()
    ctx.arc(x, 30, 25, 0, Math.PI * 2, true)
    ctx.closePath()
    ctx.fill()
  }
  ctx.fillStyle = '#f9c'
  ctx.arc(200, 30, 20, 0, Math.PI * 2, true)
  ctx.arc(200, 30, 8, 0, Math.PI * 2, true)
  ctx.fill('evenodd')
  return c
}

/** Whether two canvases read back the same pixels, compared a pixel (32 bits) at a time. */
function samePixels(a: HTMLCanvasElement, b: HTMLCanvasElement): boolean {
  const read = (c: HTMLCanvasElement) =>
    new Uint32Array(c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data.buffer)
  const x = read(a)
  const y = read(b)
  if (x.length !== y.length) return false
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false
  return true
}

/** A solid opaque fill must read back exactly; noise injectors perturb it. */
function solidFillExact(): boolean {
  const c = document.createElement('canvas')
  c.width = 8
  c.height = 8
  const ctx = c.getContext('2d')
  if (!ctx) return true
  ctx.fillStyle = 'rgb(255, 0, 0)'
  ctx.fillRect(0, 0, 8, 8)
  const d = ctx.getImageData(0, 0, 8, 8).data
  for (let i = 0; i < d.length; i += 4) {
    if (d[i] !== 255 || d[i + 1] !== 0 || d[i + 2] !== 0 || d[i + 3] !== 255) return false
  }
  return true
}

export interface CanvasProbe {
  /** The drawing as a data URL ('' when canvas is unavailable). */
  image: string
  noisy: boolean
}

export function probeCanvas(): CanvasProbe {
  const a = draw()
  const b = draw()
  if (!a || !b) return { image: '', noisy: false }
  const image = a.toDataURL()
  const noisy = image !== b.toDataURL() || !samePixels(a, b) || !solidFillExact()
  return { image, noisy }
}
