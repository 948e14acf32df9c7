// Reads a Dockerfile and a .dockerignore as the image builder would, for the image replay
// (test/deploy/image.test.ts): stages with their instructions, and the build context as the files
// that are left once .dockerignore's patterns (Docker's syntax: *, ?, **, !exceptions, the last
// match wins, a matched folder takes its contents with it) are applied.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Instruction {
  op: string;
  /** The rest of the line, continuations joined. */
  args: string;
  /** --flag=value options (COPY --from, HEALTHCHECK --interval). */
  flags: Record<string, string>;
}

export interface Stage {
  name: string | null;
  base: string;
  steps: Instruction[];
}

/** The stages of a Dockerfile, in order. */
export function parseDockerfile(text: string): Stage[] {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (!pending && (line.trim() === '' || line.trim().startsWith('#'))) continue;
    if (line.endsWith('\\')) pending += `${line.slice(0, -1)} `;
    else {
      logical.push((pending + line).trim());
      pending = '';
    }
  }
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, op = '', rest = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const flags: Record<string, string> = {};
    let args = rest;
    for (let m = /^--([\w-]+)=(\S+)\s+/.exec(args); m; m = /^--([\w-]+)=(\S+)\s+/.exec(args)) {
      flags[m[1]!] = m[2]!;
      args = args.slice(m[0].length);
    }
    if (op.toUpperCase() === 'FROM') {
      const [, base = '', name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args) ?? [];
      stages.push({ name: name ?? null, base, steps: [] });
      continue;
    }
    if (!stages.length) throw new Error(`Dockerfile: ${op} before FROM`);
    stages.at(-1)!.steps.push({ op: op.toUpperCase(), args, flags });
  }
  return stages;
}

/** ENV's key=value pairs (the form this Dockerfile uses). */
export function envPairs(args: string): Record<string, string> {
  return Object.fromEntries(
    [...args.matchAll(/(\w+)=("[^"]*"|\S+)/g)].map((m) => [m[1]!, m[2]!.replace(/^"|"$/g, '')]),
  );
}

/** An exec-form instruction's argument list (CMD ["node", "x.js"]). */
export function execForm(args: string): string[] {
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string'))
    throw new Error(`not an exec form: ${args}`);
  return parsed as string[];
}

interface Rule {
  negate: boolean;
  re: RegExp;
}

function patternToRegex(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      const slash = pattern[i + 2] === '/';
      re += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** .dockerignore as a predicate on context-relative paths (forward slashes). */
export function dockerignore(text: string): (path: string) => boolean {
  const rules: Rule[] = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const pattern = (negate ? l.slice(1) : l).trim().replace(/^\/+/, '').replace(/\/+$/, '');
      return { negate, re: patternToRegex(pattern) };
    });
  return (path) => {
    const parts = path.split('/');
    let excluded = false;
    for (const rule of rules) {
      // A rule matches the path or any folder above it.
      if (parts.some((_, i) => rule.re.test(parts.slice(0, i + 1).join('/')))) excluded = !rule.negate;
    }
    return excluded;
  };
}

/**
 * The build context: every file under `root` that .dockerignore leaves in, as relative paths.
 * An excluded folder is not descended into unless an exception (!) might bring something back.
 */
export function contextFiles(root: string, ignored: (path: string) => boolean, hasExceptions: boolean): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!ignored(path) || hasExceptions) walk(path);
      } else if (!ignored(path)) out.push(path);
    }
  };
  walk('');
  return out.sort();
}

export function readContext(root: string): string[] {
  const file = join(root, '.dockerignore');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  return contextFiles(root, dockerignore(text), /^\s*!/m.test(text));
}
