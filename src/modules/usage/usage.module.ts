import type { KoshModule } from '../../app-deps.js';

export const usageModule: KoshModule = { name: 'usage' };
