import { describe, expect, it } from 'vitest'
import { csvRecords, listCsv, parseListCsv } from '../../console/src/csv.js'

describe('console list CSV', () => {
  it('reads quoted fields with commas, doubled quotes and line breaks, CRLF or LF', () => {
    expect(csvRecords('a,"b,c","say ""hi"""\r\n\r\nd,"two\nlines",e\n')).toEqual([
      { line: 1, fields: ['a', 'b,c', 'say "hi"'] },
      { line: 3, fields: ['d', 'two\nlines', 'e'] },
    ])
  })

  it('imports list,type,value,expires_ms,note by position, or by a header in any order', () => {
    const positional = parseListCsv('vip,user,u-1,1900000000000,"big, loyal"\nblock,ip,203.0.113.0/24\n')
    expect(positional).toEqual({
      rows: [
        {
          line: 1,
          row: { list: 'vip', type: 'user', value: 'u-1', expires_ms: 1900000000000, note: 'big, loyal' },
        },
        { line: 2, row: { list: 'block', type: 'ip', value: '203.0.113.0/24' } },
      ],
      errors: [],
    })
    const named = parseListCsv('note,value,type,list,extra\nhi,+442079460958,phone,mules,x\n')
    expect(named.rows).toEqual([
      { line: 2, row: { list: 'mules', type: 'phone', value: '+442079460958', note: 'hi' } },
    ])
  })

  it('refuses each bad line with its reason and line number', () => {
    const { rows, errors } = parseListCsv(
      [
        'list,type,value,expires_ms,note,hint',
        'Block,user,u',
        'block,card,1',
        'block,user,',
        'block,email,,,,jo***@gmail.com',
        'block,user,u,soon',
        `block,user,u,,${'n'.repeat(501)}`,
        `block,user,${'x'.repeat(321)}`,
        'block,user,ok',
      ].join('\n'),
    )
    expect(rows.map((r) => r.line)).toEqual([9])
    expect(errors).toEqual([
      { line: 2, error: 'list must be allow, block or a list name (a-z, 0-9, _), not "Block"' },
      { line: 3, error: 'type must be one of email, ip, phone, device, user, attribute' },
      { line: 4, error: 'value must be 1-320 characters' },
      {
        line: 5,
        error: 'value is empty: email values are stored hashed, so an export holds only their hint',
      },
      { line: 6, error: 'expires_ms must be a time in ms since the epoch' },
      { line: 7, error: 'note must be at most 500 characters' },
      { line: 8, error: 'value must be 1-320 characters' },
    ])
  })

  it('exports every column, hashed values empty beside their hint, and re-imports its own output', () => {
    const csv = listCsv([
      {
        list: 'vip',
        type: 'user',
        hint: 'u-1',
        value: 'u-1',
        expires_ms: 1900000000000,
        note: 'say "hi", ok',
      },
      { list: 'block', type: 'ip', hint: '203.0.113.x/28' },
    ])
    expect(csv).toBe(
      'list,type,value,expires_ms,note,hint\r\nvip,user,u-1,1900000000000,"say ""hi"", ok",u-1\r\nblock,ip,,,,203.0.113.x/28\r\n',
    )
    const back = parseListCsv(csv)
    expect(back.rows).toEqual([
      {
        line: 2,
        row: { list: 'vip', type: 'user', value: 'u-1', expires_ms: 1900000000000, note: 'say "hi", ok' },
      },
    ])
    expect(back.errors).toEqual([
      { line: 3, error: 'value is empty: ip values are stored hashed, so an export holds only their hint' },
    ])
  })
})
