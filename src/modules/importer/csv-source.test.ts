import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { csvFileSource } from './csv-source.js';
import type { Section, SourceItem } from './import-source.js';
import { fromCsvRecord } from './importer.schemas.js';

const dir = mkdtempSync(join(tmpdir(), 'kosh-csv-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
async function read(section: Section, text: string): Promise<SourceItem[]> {
  const path = join(dir, `${(files += 1)}.csv`);
  writeFileSync(path, text);
  const items: SourceItem[] = [];
  for await (const item of csvFileSource({ [section]: path }).read(section)) items.push(item);
  return items;
}

const PLAN_HEADER = 'code,name,interval_unit,amount,currency';

describe('import CSV reader', () => {
  it('reads RFC 4180 records: quoted commas, line breaks and doubled quotes, CRLF, a BOM, blank lines', async () => {
    const text = `\uFEFF${PLAN_HEADER}\r\na,"One, two",month,100,INR\r\n\r\nb,"Line\r\nbreak ""quoted""",year,200,USD\r\n`;
    expect(await read('plans', text)).toEqual([
      { type: 'row', index: 0, line: 2, value: { code: 'a', name: 'One, two', interval_unit: 'month', amount: 100, currency: 'INR' } },
      { type: 'row', index: 1, line: 4, value: { code: 'b', name: 'Line\nbreak "quoted"', interval_unit: 'year', amount: 200, currency: 'USD' } },
    ]);
  });

  it('reports a malformed record by its line and reads on', async () => {
    const text = [PLAN_HEADER, 'a,"bad"quote,month,1,INR', 'b,x "y",month,1,INR', 'c,ok,month,1,INR,surplus', 'd,ok,month', 'e,ok,month,1,INR'].join('\n');
    expect(await read('plans', text)).toEqual([
      { type: 'problem', scope: 'row', index: 0, line: 2, message: expect.stringMatching(/^malformed quoting/) },
      { type: 'problem', scope: 'row', index: 1, line: 3, message: expect.stringMatching(/^malformed quoting/) },
      { type: 'problem', scope: 'row', index: 2, line: 4, key: 'c', message: 'extra columns: the row has 6 fields, the header has 5' },
      { type: 'problem', scope: 'row', index: 3, line: 5, key: 'd', message: 'missing columns: the row has 3 fields, the header has 5' },
      { type: 'row', index: 4, line: 6, value: expect.objectContaining({ code: 'e' }) },
    ]);
  });

  it('gives up on a quote that never closes after at most 100 lines, and reads the lines after it', async () => {
    const rows = Array.from({ length: 150 }, (_, i) => `p${i},Plan ${i},month,100,INR`);
    const text = [PLAN_HEADER, rows[0], '"open,Open,month,100,INR', ...rows.slice(1)].join('\n');
    const items = await read('plans', text);
    expect(items.filter((i) => i.type === 'problem')).toEqual([
      {
        type: 'problem',
        scope: 'row',
        index: 1,
        line: 3,
        message: 'a quoted field opened on line 3 is never closed; the lines after it were read as new rows',
      },
    ]);
    expect(items.filter((i) => i.type === 'row').map((i) => (i as { value: { code: string } }).value.code)).toEqual(rows.map((_, i) => `p${i}`));
  });

  it.each([
    ['a required column missing', 'code,name,amount,currency\na,A,1,INR\n', 'header row: missing column interval_unit; the file was not read'],
    ['an unknown column', `${PLAN_HEADER},colour\na,A,month,1,INR,red\n`, expect.stringMatching(/^header row: unknown column colour \(known: code, name, /)],
    ['a column twice', `${PLAN_HEADER},code\na,A,month,1,INR,a\n`, 'header row: column named twice: code; the file was not read'],
    ['no header at all', '', 'the file is empty: it needs a header row'],
  ])('refuses a file with %s', async (_name, text, message) => {
    expect(await read('plans', text)).toEqual([{ type: 'problem', scope: 'section', line: 1, message }]);
  });

  describe('cells', () => {
    it.each([
      ['plans', { amount: '49900', interval_count: '3', hsn_code: '' }, { amount: 49900, interval_count: 3 }],
      ['plans', { amount: '12.50' }, { amount: '12.50' }],
      ['subscriptions', { cancel_at_period_end: 'TRUE', trial_end: '' }, { cancel_at_period_end: true }],
      ['subscriptions', { cancel_at_period_end: 'yes' }, { cancel_at_period_end: 'yes' }],
      [
        'customers',
        { email: 'a@b.test', 'billing_address.city': 'Pune', 'billing_address.country': 'IN', 'billing_address.line1': '' },
        { email: 'a@b.test', billing_address: { city: 'Pune', country: 'IN' } },
      ],
      ['customers', { email: 'a@b.test', 'billing_address.city': '' }, { email: 'a@b.test' }],
    ] as const)('%s %j become %j', (section, record, expected) => {
      expect(fromCsvRecord(section, record)).toEqual(expected);
    });
  });
});
