// A worker thread's entry: tsx's loader is not registered in worker threads on Node 20 (a .ts
// entry fails with ERR_UNKNOWN_FILE_EXTENSION), so the front is imported through tsx's API.
import { tsImport } from 'tsx/esm/api';

await tsImport('./front.ts', import.meta.url);
