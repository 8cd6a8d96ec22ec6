/**
 * A PostgreSQL array literal of values that need no quoting — uuids in their canonical form, RFC
 * 3339 instants, finite numbers, NULL — built in one pass. node-postgres would escape and quote
 * every element of a JavaScript array (a set-based statement of 1 000 rows sends several such
 * arrays), which is most of the cost of sending them (decision 0690). Callers pass only values of
 * those shapes: anything with a comma, brace, quote, backslash or space would change the array.
 */
export function plainArrayLiteral(values: readonly (string | number | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i += 1) {
    const v = values[i];
    out += (i === 0 ? '' : ',') + (v === null ? 'NULL' : String(v));
  }
  return `${out}}`;
}

/**
 * A PostgreSQL `text[]` literal whose elements are themselves numeric array literals, one list
 * each (`{"{1,2.5}","{NULL}"}`): a list of numbers per row of a set-based statement, to be cast
 * with `::numeric[]` where used. Finite numbers and NULL only, as plainArrayLiteral.
 */
export function numberListsLiteral(lists: readonly (readonly (number | null)[])[]): string {
  let out = '{';
  for (let i = 0; i < lists.length; i += 1) out += `${i === 0 ? '' : ','}"${plainArrayLiteral(lists[i]!)}"`;
  return `${out}}`;
}
