// The browser board's build: web/ → dist/web, hashed assets, no inline script (the CSP allows none).
// The operator console (web/src/admin/, loaded lazily by the page at /admin) is written apart, to
// dist/web/admin/assets, which the server sends only to operators (src/routes/web.ts).
import preact from '@preact/preset-vite';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const ADMIN_SOURCES = fileURLToPath(new URL('./src/admin/', import.meta.url));
/** The console's chunk (and its style sheet) carry this name: web/src/admin/admin-console.tsx. */
const ADMIN_NAME = 'admin-console';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [preact({ prerender: { enabled: false } })],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
    rollupOptions: {
      output: {
        chunkFileNames: (chunk) =>
          chunk.name === ADMIN_NAME || chunk.moduleIds.every((id) => id.startsWith(ADMIN_SOURCES))
            ? 'admin/assets/[name]-[hash].js'
            : 'assets/[name]-[hash].js',
        assetFileNames: (asset) =>
          (asset.names ?? []).some((n) => n.startsWith(ADMIN_NAME))
            ? 'admin/assets/[name]-[hash][extname]'
            : 'assets/[name]-[hash][extname]',
      },
    },
  },
});
