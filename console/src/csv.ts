/**
 * List entries as CSV (RFC 4180: fields with a comma, quote or line break are quoted, quotes doubled).
 * Columns `list,type,value,expires_ms,note`; an export adds `hint`, the only form of a hashed value
 * (email, ip, phone, attribute) the server still knows, so such rows export with an empty value.
 */
export interface CsvRow {
  list: string
  type: string
  value: string
  expires_ms?: number
  note?: string
}

export const IMPORT_COLUMNS = ['list', 'type', 'value', 'expires_ms', 'note'] as const
export const EXPORT_COLUMNS = [...IMPORT_COLUMNS, 'hint'] as const
const LIST_NAME = /^[a-z][a-z0-9_]{0,39}$/
export const TYPES = ['email', 'ip', 'phone', 'device', 'user', 'attribute']

/** Splits CSV text into records of fields; a quoted field may hold commas, quotes and line breaks. */
export function csvRecords(text: string): { line: number; fields: string[] }[] {
  const out: { line: number; fields: string[] }[] = []
  let fields: string[] = []
  let field = ''
  let quoted = false
  let line = 1
  let start = 1
  const end = () => {
    fields.push(field)
    if (fields.length > 1 || fields[0]!.trim() !== '') out.push({ line: start, fields })
    fields = []
    field = ''
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (c === '"') quoted = false
      else {
        if (c === '\n') line++
        field += c
      }
    } else if (c === '"' && field.trim() === '') {
      quoted = true
      field = ''
    } else if (c === ',') {
      fields.push(field)
      field = ''
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++
      end()
      line++
      start = line
    } else field += c
  }
  end()
  return out
}

/**
 * Import rows: a first line naming columns maps them by name (any order, unknown ones ignored),
 * otherwise the columns are `list,type,value,expires_ms,note`. Each refused line says why.
 */
export function parseListCsv(text: string): {
  rows: { line: number; row: CsvRow }[]
  errors: { line: number; error: string }[]
} {
  const rows: { line: number; row: CsvRow }[] = []
  const errors: { line: number; error: string }[] = []
  const records = csvRecords(text)
  let columns: readonly string[] = IMPORT_COLUMNS
  const first = records[0]?.fields.map((f) => f.trim().toLowerCase())
  if (first?.includes('list') && first.includes('type')) {
    columns = first
    records.shift()
  }
  for (const { line, fields } of records) {
    const get = (name: string) => {
      const i = columns.indexOf(name)
      return i < 0 ? '' : (fields[i] ?? '').trim()
    }
    const list = get('list')
    const type = get('type')
    const value = get('value')
    const expires = get('expires_ms')
    const note = get('note')
    if (!LIST_NAME.test(list))
      errors.push({ line, error: `list must be allow, block or a list name (a-z, 0-9, _), not "${list}"` })
    else if (!TYPES.includes(type)) errors.push({ line, error: `type must be one of ${TYPES.join(', ')}` })
    else if (value === '' && get('hint') !== '')
      errors.push({
        line,
        error: `value is empty: ${type} values are stored hashed, so an export holds only their hint`,
      })
    else if (value === '' || value.length > 320)
      errors.push({ line, error: 'value must be 1-320 characters' })
    else if (expires !== '' && !/^\d{1,15}$/.test(expires))
      errors.push({ line, error: 'expires_ms must be a time in ms since the epoch' })
    else if (note.length > 500) errors.push({ line, error: 'note must be at most 500 characters' })
    else
      rows.push({
        line,
        row: {
          list,
          type,
          value,
          ...(expires !== '' ? { expires_ms: Number(expires) } : {}),
          ...(note !== '' ? { note } : {}),
        },
      })
  }
  return { rows, errors }
}

const quote = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s)

/** Export: one line per entry, with a header; hashed values go out empty beside their hint. */
export function listCsv(
  entries: readonly {
    list: string
    type: string
    hint: string
    value?: string
    expires_ms?: number
    note?: string
  }[],
): string {
  const lines = [EXPORT_COLUMNS.join(',')]
  for (const e of entries) {
    const fields = [e.list, e.type, e.value ?? '', e.expires_ms?.toString() ?? '', e.note ?? '', e.hint]
    lines.push(fields.map(quote).join(','))
  }
  return `${lines.join('\r\n')}\r\n`
}
