import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { stringify } from 'csv-stringify/sync';

/** Whether the caller asked for CSV: `?format=csv` or `Accept: text/csv`. */
export function wantsCsv(request: FastifyRequest): boolean {
  const format = (request.query as { format?: unknown } | undefined)?.format;
  if (format === 'csv') return true;
  const accept = request.headers.accept ?? '';
  return /\btext\/csv\b/i.test(accept) && !/\bapplication\/json\b/i.test(accept);
}

/** Answers a table as CSV (RFC 4180, header row first) for download. */
export function sendCsv(reply: FastifyReply, filename: string, columns: string[], rows: Record<string, unknown>[]): FastifyReply {
  const body = stringify(rows, { header: true, columns, cast: { boolean: (v) => String(v) } });
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename.replace(/[^\w.-]/g, '_')}"`)
    .send(body);
}

/** A CSV (or other text download) body in the OpenAPI document. */
export const csvText = z.string().meta({ description: 'CSV (RFC 4180), a header row first; sent as an attachment' });

/**
 * The 200 of a report that answers JSON, or CSV with `?format=csv` (or `Accept: text/csv`): both
 * content types in the OpenAPI document.
 */
export function jsonOrCsv<T extends z.ZodType>(json: T) {
  return {
    description: 'The report as JSON, or as CSV with `format=csv` (or `Accept: text/csv`)',
    content: { 'application/json': { schema: json }, 'text/csv': { schema: csvText } },
  };
}
