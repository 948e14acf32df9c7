import { openEmbeddedStore } from '../../store/embedded/index.js';
import { tempDir } from '../support/temp.js';
import { fleetFlow } from './fleet-flow.js';

fleetFlow('embedded', async () => {
  const dir = await tempDir();
  return { store: await openEmbeddedStore(dir.path), drop: dir.remove };
});
