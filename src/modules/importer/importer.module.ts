import type { KoshModule } from '../../app-deps.js';

export const importerModule: KoshModule = {
  name: 'importer',
};
