/**
 * The one HTML escaper for the server-rendered pages (portal, hosted checkout): every value from
 * the database or the request goes through it before it reaches markup, attribute or text.
 * `null`/`undefined` render as nothing.
 */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
