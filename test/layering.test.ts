// The rule of direction for the server's lower layers: src/{auth,ratelimit,ws,bus,errors,accounts,
// board,billing,mail} never import src/http or src/routes (eslint.config.js), and the files that
// used to (auth, budgets, board access) no longer do.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint();
const LOWER = ['auth', 'ratelimit', 'ws', 'bus', 'errors', 'accounts', 'board', 'billing', 'mail'];

async function restricted(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('lower layers never import src/http or src/routes', () => {
  it.each(LOWER)('src/%s is refused both', async (dir) => {
    const code =
      "import type { Route } from '../http/route.js';\nimport type { RouteDeps } from '../routes/deps.js';\nexport type X = [Route, RouteDeps];\n";
    const messages = await restricted(code, `src/${dir}/layering-probe.ts`);
    expect(messages).toHaveLength(2);
    expect(messages[0]).toMatch(/never import src\/http or src\/routes/);
  });

  it('still refuses adapters there, and leaves src/routes free to import src/http', async () => {
    expect(
      await restricted(
        "export { openEmbeddedStore } from '../../store/embedded/index.js';\n",
        'src/board/layering-probe.ts',
      ),
    ).toHaveLength(1);
    expect(
      await restricted("export type { Route } from '../http/route.js';\n", 'src/routes/layering-probe.ts'),
    ).toEqual([]);
  });

  it('holds for the authenticator, the rate budgets and board access', async () => {
    const results = await eslint.lintFiles([
      'src/auth/authenticator.ts',
      'src/ratelimit/budgets.ts',
      'src/board/*.ts',
      'src/errors/*.ts',
    ]);
    const refused = results.flatMap((r) =>
      r.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => `${r.filePath}: ${m.message}`),
    );
    expect(refused).toEqual([]);
  });
});
