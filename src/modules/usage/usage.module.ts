import type { KoshModule } from '../../app-deps.js';
import { MAINTAIN_PARTITIONS_JOB, maintainPartitionsJob } from './usage.partitions.js';

export const usageModule: KoshModule = {
  name: 'usage',
  jobs: { [MAINTAIN_PARTITIONS_JOB]: maintainPartitionsJob },
  recurring: [{ kind: MAINTAIN_PARTITIONS_JOB, everyMs: 3_600_000 }],
};
