import type { Role } from './auth.tables.js';

export type { Role };

/** Roles from least to most: each includes every right of those before it. */
export const ROLES: readonly Role[] = ['viewer', 'support', 'finance', 'admin', 'owner'];

export function roleRank(role: Role): number {
  return ROLES.indexOf(role);
}

/** Whether `role` has at least the rights of `needed`. */
export function hasRole(role: Role, needed: Role): boolean {
  return roleRank(role) >= roleRank(needed);
}

/**
 * Who acts in a `/v1` request: an API key (full rights) or a signed-in operator with a role. The
 * audit log records it; `system` is the worker and other unattended changes.
 */
export type Actor =
  | { type: 'api_key'; id: string; label: string }
  | { type: 'user'; id: string; label: string; role: Role; sessionId: string; csrfToken: string }
  | { type: 'system'; id: null; label: string };
