// The browser board as served, without a browser: every page path answers the one index.html under
// the strict CSP and no-cache; its hashed assets are cached for a year; no script is inline.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

describe('the browser board, served', () => {
  let server: TestServer;
  let index: string;
  beforeAll(async () => {
    server = await startTestServer();
    const res = await fetch(`${server.url}/`);
    index = await res.text();
  });
  afterAll(() => server.stop());

  it.each(['/', '/signin', '/signup', '/projects', '/boards/x', '/boards/x/items/y', '/account/tokens'])(
    '%s answers index.html under the CSP, not cached',
    async (path) => {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
      expect(await res.text()).toBe(index);
    },
  );

  it('index.html has no inline script: every script tag loads a file', () => {
    const scripts = [...index.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [tag, attrs, body] of scripts) {
      expect(attrs, tag).toMatch(/\bsrc=["']?\/assets\//);
      expect(body!.trim(), tag).toBe('');
    }
    expect(index).not.toMatch(/\son[a-z]+=/i); // no inline event handlers either
    expect(index).not.toMatch(/<style\b/i);
  });

  it('every asset index.html references is served for a year, immutable', async () => {
    const refs = [...new Set([...index.matchAll(/(?:src|href)=["']?(\/assets\/[^"'\s>]+)/g)].map((m) => m[1]!))];
    expect(refs.some((r) => r.endsWith('.js'))).toBe(true);
    for (const ref of refs) {
      const res = await fetch(`${server.url}${ref}`);
      expect(res.status, ref).toBe(200);
      const cache = res.headers.get('cache-control') ?? '';
      expect(cache, ref).toContain('immutable');
      expect(cache, ref).toContain('max-age=31536000');
      if (ref.endsWith('.js')) expect(res.headers.get('content-type'), ref).toMatch(/^text\/javascript/);
      if (ref.endsWith('.css')) expect(res.headers.get('content-type'), ref).toMatch(/^text\/css/);
      expect((await res.arrayBuffer()).byteLength, ref).toBeGreaterThan(0);
    }
  });

  it('an unknown asset is a 404 JSON envelope', async () => {
    const res = await fetch(`${server.url}/assets/nope.js`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control') ?? '').not.toContain('immutable');
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('NOT_FOUND');
    expect(body.error.message).toMatch(/asset/i);
  });
});
