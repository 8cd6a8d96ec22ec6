import { errors } from '../errors.js';
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
 * Who acts in a `/v1` request: an API key or a signed-in operator, each with a role (the same role
 * table governs both, decision 0220). The audit log records it; `system` is the worker and other
 * unattended changes.
 */
export type Actor =
  | { type: 'api_key'; id: string; label: string; role: Role }
  | { type: 'user'; id: string; label: string; role: Role; sessionId: string; csrfToken: string }
  | { type: 'system'; id: null; label: string };

/** The role an actor acts with; the system (the worker, registration) is not limited by one. */
export function roleOf(actor: Actor): Role {
  return actor.type === 'system' ? 'owner' : actor.role;
}

/**
 * Granting a role (to an operator or a key), or changing or removing someone who holds one, needs
 * at least that role: an admin can neither make nor touch an owner, and whatever an actor mints
 * (a key, an invitation) can do no more than the actor itself (DESIGN §21, decision 0220).
 */
export function assertMayGrant(actor: Actor, role: Role): void {
  const own = roleOf(actor);
  if (hasRole(own, role)) return;
  throw errors.forbidden(
    role === 'owner' ? 'only an owner may make, change or remove an owner' : `you act as ${own}; you cannot grant or change the ${role} role`,
    'role_forbidden',
  );
}
