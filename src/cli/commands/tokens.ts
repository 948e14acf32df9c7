// agent-board tokens list|issue|revoke: the account's service tokens. These are account operations:
// they need an account-scoped token (or a session), not the workspace token `login` stores
// (the board answers 403 PROJECT_SCOPE_DENIED, exit 3).
import { Option, type Command } from 'commander';
import { cliOf } from '../context.js';

export function tokenCommands(program: Command): void {
  const tokens = program
    .command('tokens')
    .description('List, issue and revoke service tokens (needs an account-scoped token)');
  tokens
    .command('list')
    .description('The live tokens: name, scope, board, prefix, last use')
    .action(async (_o: unknown, command: Command) => {
      const { out, client } = await cliOf(command);
      const page = await client.get('/api/accounts/tokens');
      out.result(page, (p) =>
        p.tokens.length
          ? p.tokens.map(
              (t) =>
                `${out.paint('bold', t.id)}  ${t.name}  ${t.scope}${t.role ? `/${t.role}` : ''}  ${t.projectId ?? '-'}  ${t.prefix}…  last used ${t.lastUsedAt ?? 'never'}${t.expiresAt ? `  expires ${t.expiresAt}` : ''}`,
            )
          : ['no tokens'],
      );
    });
  tokens
    .command('issue')
    .description('Issue a token; its secret is shown this once')
    .requiredOption('--name <name>', 'who or what it is for')
    .addOption(new Option('--scope <scope>').choices(['account', 'workspace', 'resource']).default('workspace'))
    .addOption(new Option('--role <role>').choices(['admin', 'member', 'viewer']))
    .option('--resources <list>', 'resource tokens: work ids or operation groups, comma separated', (v: string) =>
      v.split(','),
    )
    .option('--expires <iso>', 'an ISO 8601 expiry')
    .action(
      async (
        o: {
          name: string;
          scope: 'account' | 'workspace' | 'resource';
          role?: 'admin' | 'member' | 'viewer';
          resources?: string[];
          expires?: string;
        },
        command: Command,
      ) => {
        const { out, client, query } = await cliOf(command);
        const issued = await client.post('/api/accounts/tokens', {
          body: {
            name: o.name,
            scope: o.scope,
            ...(o.scope !== 'account' && query.projectId && { projectId: query.projectId }),
            ...(o.role && { role: o.role }),
            ...(o.resources && { resources: o.resources }),
            ...(o.expires && { expiresAt: o.expires }),
          },
        });
        out.result(issued, (r) => [
          `Issued ${r.token.id} (${r.token.scope}${r.token.projectId ? ` on ${r.token.projectId}` : ''}) for agent:${r.token.agentId}.`,
          `secret (shown once): ${out.paint('bold', r.secret)}`,
        ]);
      },
    );
  tokens
    .command('revoke <tokenId>')
    .description('Revoke a token at once (its sockets close)')
    .action(async (tokenId: string, _o: unknown, command: Command) => {
      const { out, client } = await cliOf(command);
      await client.delete('/api/accounts/tokens/{tokenId}', { params: { path: { tokenId } } });
      out.result({ revoked: tokenId }, (r) => `Revoked ${r.revoked}.`);
    });
}
