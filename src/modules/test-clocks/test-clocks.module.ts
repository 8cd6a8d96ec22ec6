import type { KoshModule } from '../../app-deps.js';

/** Test clocks have no jobs of their own: an advance runs the other modules' sweeps and jobs (decision 0440). */
export const testClocksModule: KoshModule = { name: 'test-clocks' };
