// A paid upgrade survives a crash at each step of the webhook on the embedded store (the flow:
// billing-crash-flow.ts).
import { openEmbeddedStore } from '../../store/embedded/index.js';
import { tempDir } from '../support/temp.js';
import { crashFlow } from './billing-crash-flow.js';

crashFlow('embedded', async () => {
  const dir = await tempDir();
  return { env: { DATA_DIR: dir.path }, open: () => openEmbeddedStore(dir.path), drop: dir.remove };
});
