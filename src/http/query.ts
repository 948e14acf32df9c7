// Query-string numbers live in src/int-in-range.ts, below http; this name stays for its importers.
export { intInRange } from '../int-in-range.js';
