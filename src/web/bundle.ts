// The browser board as built by Vite (scripts/build-web.mjs) into dist/web: index.html for every
// page path (the history API routes in the page), and content-hashed assets served for a year.
// Read once at start; a missing build leaves the pages answering 503 and everything else working.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the build lands: dist/web beside src/ (from src/web/ here, or dist/src/web/ once compiled, both ../../web from dist's view). */
export const WEB_DIR = fileURLToPath(
  new URL(import.meta.url.includes('/dist/src/') ? '../../web/' : '../../dist/web/', import.meta.url),
);

/**
 * No inline script or style, nothing from elsewhere; sockets and fetches to this origin only.
 * (`'self'` in connect-src covers ws:// and wss:// to the same host.)
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

export interface WebFile {
  body: Buffer;
  contentType: string;
}

export interface WebBundle {
  /** index.html, or null when the board is not built. */
  index: string | null;
  /** Hashed files under assets/, by name. */
  assets: ReadonlyMap<string, WebFile>;
  /** The operator console's hashed files (admin/assets/), sent only to operators. */
  adminAssets?: ReadonlyMap<string, WebFile>;
}

export function loadWebBundle(dir: string = WEB_DIR): WebBundle {
  const indexFile = join(dir, 'index.html');
  if (!existsSync(indexFile)) return { index: null, assets: new Map(), adminAssets: new Map() };
  return {
    index: readFileSync(indexFile, 'utf8'),
    assets: readAssets(join(dir, 'assets')),
    adminAssets: readAssets(join(dir, 'admin', 'assets')),
  };
}

function readAssets(assetDir: string): Map<string, WebFile> {
  const assets = new Map<string, WebFile>();
  if (existsSync(assetDir)) {
    for (const name of readdirSync(assetDir)) {
      assets.set(name, {
        body: readFileSync(join(assetDir, name)),
        contentType: TYPES[extname(name)] ?? 'application/octet-stream',
      });
    }
  }
  return assets;
}
