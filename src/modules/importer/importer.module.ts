import type { KoshModule } from '../../app-deps.js';
import { registerImporterRoutes } from './importer.routes.js';

export const importerModule: KoshModule = {
  name: 'importer',
  registerRoutes: registerImporterRoutes,
};
