import type { KoshModule } from '../../app-deps.js';

export const gstReturnsModule: KoshModule = { name: 'gst-returns' };
