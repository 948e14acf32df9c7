// The README and docs/ link each other by relative paths and #anchors; a moved file or a renamed
// heading breaks them silently on GitHub. Every relative link in README.md and docs/**/*.md must
// name a file or folder of the repository, and every #anchor a heading of its target, by GitHub's
// slugs (lowercase, punctuation but hyphens and underscores dropped, spaces to hyphens, a repeated
// heading -1, -2, …). Links in code (fenced blocks, code spans) are text, not links.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** A heading's text as GitHub renders it (inline markup gone), then GitHub's slug of it. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/(^|[^\w])_([^_]+)_(?=[^\w]|$)/g, '$1$2') // _emphasis_, not snake_case
    .replace(/`/g, '');
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Lines outside fenced code blocks, with the fences themselves blanked (line numbers kept). */
function proseLines(markdown: string): string[] {
  let fence: { char: string; length: number } | null = null;
  return markdown.split('\n').map((line) => {
    const opening = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence === null) {
      if (opening) {
        fence = { char: opening[1]![0]!, length: opening[1]!.length };
        return '';
      }
      return line;
    }
    const closing = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
    if (closing && closing[1]![0] === fence.char && closing[1]!.length >= fence.length) fence = null;
    return '';
  });
}

/** The anchors a file's headings get, in order, duplicates numbered as GitHub numbers them. */
function anchors(markdown: string): string[] {
  const seen = new Map<string, number>();
  const out: string[] = [];
  const add = (heading: string) => {
    const base = slug(heading);
    let result = base;
    if (seen.has(base)) {
      let n = seen.get(base)!;
      do result = `${base}-${++n}`;
      while (seen.has(result));
      seen.set(base, n);
    }
    seen.set(result, 0);
    out.push(result);
  };
  const lines = proseLines(markdown);
  lines.forEach((line, i) => {
    const atx = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (atx) return add(atx[1]!);
    const previous = lines[i - 1]?.trim() ?? '';
    const paragraph = previous !== '' && !/^(#|[-*+>|]|\d+[.)])/.test(previous);
    if (/^ {0,3}(=+|-+)[ \t]*$/.test(line) && paragraph) add(previous);
  });
  return out;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

/** Relative link targets (inline links, images and reference definitions) outside code. */
function links(file: string, markdown: string): Link[] {
  const out: Link[] = [];
  proseLines(markdown).forEach((raw, i) => {
    const line = raw.replace(/(`+)(?:(?!\1).)+?\1/g, 'code'); // code spans are text
    const found = [
      ...[...line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
      ...[...line.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/g)].map((m) => m[1]!),
    ];
    for (const target of found) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // another site
      out.push({ file, line: i + 1, target });
    }
  });
  return out;
}

/** What is wrong with a link, or null: `read` gives a file's text (null when it is no file). */
function problem(link: Link, read: (path: string) => string | null, exists: (path: string) => boolean): string | null {
  const hash = link.target.indexOf('#');
  const path = decodeURIComponent(hash === -1 ? link.target : link.target.slice(0, hash));
  const fragment = hash === -1 ? null : decodeURIComponent(link.target.slice(hash + 1));
  const target = path === '' ? link.file : resolve(dirname(link.file), path);
  if (target !== ROOT && !target.startsWith(ROOT + sep)) return `${path} is outside the repository`;
  if (!exists(target)) return `${path} does not exist`;
  if (fragment === null) return null;
  const text = target.endsWith('.md') ? read(target) : null;
  if (text === null) return `#${fragment}: ${relative(ROOT, target)} is no Markdown file`;
  return anchors(text).includes(fragment) ? null : `#${fragment} names no heading of ${relative(ROOT, target)}`;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
}

const readDisk = (path: string): string | null =>
  existsSync(path) && statSync(path).isFile() ? readFileSync(path, 'utf8') : null;

describe("GitHub's heading anchors", () => {
  it('slug headings as GitHub does', () => {
    expect(slug('Device flow (RFC 8628)')).toBe('device-flow-rfc-8628');
    expect(slug('Impersonation, allowlist, contact')).toBe('impersonation-allowlist-contact');
    expect(slug('`NODE_ID` and `NODE_URL`')).toBe('node_id-and-node_url');
    expect(slug('Operators: Live view')).toBe('operators-live-view');
    expect(slug('The [typed client](agents.md) _here_')).toBe('the-typed-client-here');
    expect(slug('Claim → submit')).toBe('claim--submit');
  });

  it('number repeated headings and ignore what is in code', () => {
    const text = '# Setup\n\n## Setup\n\n```sh\n# not a heading\n```\n\n## Setup\n\nSetext\n------\n';
    expect(anchors(text)).toEqual(['setup', 'setup-1', 'setup-2', 'setext']);
  });

  it('find links outside code only, and tell a broken one', () => {
    const file = join(ROOT, 'docs', 'virtual.md');
    const text = [
      '# Here',
      'See [there](other.md#gone), [here](#here), [away](https://example.com/x.md#y) and `[no](link.md)`.',
      '```md',
      '[not](a-link.md)',
      '```',
      '[ref]: ../README.md#nowhere',
    ].join('\n');
    const found = links(file, text);
    expect(found.map((l) => l.target)).toEqual(['other.md#gone', '#here', '../README.md#nowhere']);
    const files = new Map([
      [file, text],
      [join(ROOT, 'docs', 'other.md'), '# Other\n'],
      [join(ROOT, 'README.md'), '# Readme\n'],
    ]);
    const problems = found.map((l) =>
      problem(
        l,
        (p) => files.get(p) ?? null,
        (p) => files.has(p),
      ),
    );
    expect(problems).toEqual([
      '#gone names no heading of docs/other.md',
      null,
      '#nowhere names no heading of README.md',
    ]);
    expect(problem({ file, line: 1, target: '../../elsewhere.md' }, readDisk, existsSync)).toMatch(/outside/);
    expect(problem({ file, line: 1, target: 'missing.md' }, readDisk, existsSync)).toBe('missing.md does not exist');
  });
});

describe('README.md and docs/', () => {
  const files = [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs'))];
  const all = files.flatMap((file) => links(file, readFileSync(file, 'utf8')));

  it('every relative link and anchor leads somewhere', () => {
    const broken = all
      .map((link) => ({ link, why: problem(link, readDisk, existsSync) }))
      .filter((b) => b.why !== null)
      .map(({ link, why }) => `${relative(ROOT, link.file)}:${link.line} ${link.target}: ${why}`);
    expect(broken).toEqual([]);
  });

  it('finds the links there are (the check is not vacuous)', () => {
    expect(files.length).toBeGreaterThanOrEqual(6);
    expect(all.length).toBeGreaterThan(60);
    expect(all.filter((l) => l.target.includes('#')).length).toBeGreaterThan(40);
    expect(all.filter((l) => !l.target.startsWith('#')).length).toBeGreaterThan(30);
  });

  it('the README leads to every page of docs/', () => {
    const readme = join(ROOT, 'README.md');
    const linked = new Set(
      all.filter((l) => l.file === readme).map((l) => resolve(ROOT, decodeURIComponent(l.target.split('#')[0]!))),
    );
    const unlinked = files.filter((f) => f !== readme && !linked.has(f)).map((f) => relative(ROOT, f));
    expect(unlinked).toEqual([]);
  });
});
