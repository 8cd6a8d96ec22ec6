import type { Json, Timestamp } from '../db/schema.js';

export interface EventsTable {
  tenant_id: string;
  id: string;
  type: string;
  object_type: string;
  object_id: string | null;
  payload: Json<unknown>;
  created_at: Timestamp;
}

declare module '../db/schema.js' {
  interface Tables {
    events: EventsTable;
  }
}
