import type { Role } from '../../platform/auth/actor.js';
import type { Timestamp } from '../../platform/db/schema.js';

export interface UserInvitationsTable {
  tenant_id: string;
  id: string;
  email: string;
  role: Role;
  token_hash: string;
  invited_by_type: string;
  invited_by_id: string | null;
  expires_at: Timestamp;
  accepted_at: Timestamp | null;
  revoked_at: Timestamp | null;
  created_at: Timestamp;
}

export interface UserPasswordResetsTable {
  tenant_id: string;
  id: string;
  user_id: string;
  token_hash: string;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  created_at: Timestamp;
}

export interface UserRecoveryCodesTable {
  tenant_id: string;
  id: string;
  user_id: string;
  code_hash: string;
  used_at: Timestamp | null;
  created_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    user_invitations: UserInvitationsTable;
    user_password_resets: UserPasswordResetsTable;
    user_recovery_codes: UserRecoveryCodesTable;
  }
}
