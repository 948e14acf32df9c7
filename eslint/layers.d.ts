// Types for eslint/layers.js, which test/layering.test.ts reads.
export const LAYERS: readonly (readonly string[])[];
export function roomOf(file: string): string | null;
declare const plugin: { rules: Record<string, unknown> };
export default plugin;
