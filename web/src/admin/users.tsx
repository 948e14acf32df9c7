// Users: find an account by email prefix or id, and one account's detail (boards, tokens,
// billing, audit) with the operator's actions on it, each destructive one behind a confirm step.
import type { Reply } from '@agent-board/client';
import { useState } from 'preact/hooks';
import { client } from '../api.js';
import { navigate, queryParam } from '../router.js';
import { ago, ErrorNote, Field, Form, useAction } from '../ui/kit.js';
import { auditCells, Guarded, Rows, useLoad } from './shared.js';

export function UsersSection() {
  const initial = queryParam('q') ?? '';
  const [q, setQ] = useState(initial);
  const [deleted, setDeleted] = useState(false);
  const query = deleted ? { status: 'deleted' as const } : initial ? { q: initial } : null;
  const found = useLoad(query && JSON.stringify(query), () =>
    client.get('/api/admin/users', { params: { query: { ...query, limit: 50 } } }),
  );
  return (
    <section>
      <form
        class="row search"
        onSubmit={(e) => {
          e.preventDefault();
          setDeleted(false);
          navigate(`/admin/users?q=${encodeURIComponent(q.trim())}`);
        }}
      >
        <input
          type="search"
          name="q"
          aria-label="Email prefix or account id"
          class="grow"
          value={q}
          placeholder="email prefix or account id"
          onInput={(e) => setQ((e.target as HTMLInputElement).value)}
        />
        <button type="submit" class="primary">
          Search
        </button>
        <button type="button" aria-pressed={deleted} onClick={() => setDeleted(!deleted)}>
          Deleted accounts
        </button>
      </form>
      <ErrorNote error={found.error} />
      {query === null ? (
        <p class="muted">Search by the start of an email address, or paste an account id.</p>
      ) : found.data ? (
        found.data.users.length ? (
          <table class="list dense">
            <thead>
              <tr>
                <th>email</th>
                <th>status</th>
                <th>plan</th>
                <th class="num">owned</th>
                <th class="num">member</th>
                <th>created</th>
                <th>last sign-in</th>
              </tr>
            </thead>
            <tbody>
              {found.data.users.map((u) => (
                <tr key={u.id}>
                  <td>
                    <a href={`/admin/users/${u.id}`}>{u.email}</a>
                    {u.displayName ? <span class="muted"> · {u.displayName}</span> : null}
                  </td>
                  <td>
                    <span class={`pill ${u.status}`}>{u.status}</span>
                  </td>
                  <td>{u.plan}</td>
                  <td class="num">{u.boards.owned}</td>
                  <td class="num">{u.boards.member}</td>
                  <td>{ago(u.createdAt)}</td>
                  <td>{ago(u.lastSignInAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p class="muted">No account matches.</p>
        )
      ) : (
        <p class="muted">Searching…</p>
      )}
    </section>
  );
}

export function UserPage({ userId }: { userId: string }) {
  const params = { path: { userId } };
  const detail = useLoad(userId, () => client.get('/api/admin/users/{userId}', { params }));
  const [note, setNote] = useState<string | null>(null);
  if (detail.error) return <ErrorNote error={detail.error} />;
  const d = detail.data;
  if (!d) return <p class="muted">Loading…</p>;
  const u = d.user;
  const after = (text: string) => () => (setNote(text), detail.reload());
  return (
    <section class="user">
      <header class="user-head">
        <div>
          <h1>{u.email}</h1>
          <div class="row muted">
            <code>{u.id}</code>
            <span class={`pill ${u.status}`}>{u.status}</span>
            <span>{u.plan}</span>
            <span>{u.emailVerified ? 'email verified' : 'email not verified'}</span>
            <span>created {ago(u.createdAt)}</span>
            <span>last sign-in {ago(u.lastSignInAt)}</span>
            {u.deletedAt ? (
              <span>
                deleted {ago(u.deletedAt)} by {u.deletedBy}, purged after {u.purgeAfter?.slice(0, 10)}
              </span>
            ) : null}
          </div>
        </div>
      </header>
      {note ? (
        <div class="note ok" role="status">
          {note}
        </div>
      ) : null}
      <div class="actions">
        <Guarded
          label="Impersonate"
          danger={false}
          effect={
            <>
              This browser acts as {u.email} for 30 minutes; the console closes until you end it from the banner. Their
              password, email, deletion, tokens and billing stay out of reach.
            </>
          }
          run={(reason) => client.post('/api/admin/users/{userId}/impersonate', { params, body: { reason } })}
          done={() => location.assign('/projects')}
        />
        <Guarded
          label="Revoke sessions and tokens"
          effect={
            <>
              Every session and token of {u.email} is revoked (
              {plural(d.tokens.filter((t) => !t.revoked).length, 'live token')}); their agents’ sockets close now. The
              account stays: they can sign in again.
            </>
          }
          run={(reason) => client.post('/api/admin/users/{userId}/revoke', { params, body: { reason } })}
          done={(r) => after(`Revoked: ${JSON.stringify(r)}`)()}
        />
        {u.status === 'active' ? (
          <Guarded
            label="Delete account"
            effect={
              <>
                Sign-in is refused, sessions and tokens revoked, subscriptions cancelled, the {u.boards.owned} boards it
                owns closed to their members. Everything is kept 30 days and can be restored.
              </>
            }
            run={(reason) => client.post('/api/admin/users/{userId}/delete', { params, body: { reason } })}
            done={after('Deleted; restorable for 30 days.')}
          />
        ) : (
          <>
            <Guarded
              label="Restore account"
              danger={false}
              effect={<>Sign-in works again and its boards open. Revoked sessions and tokens stay revoked.</>}
              run={(reason) => client.post('/api/admin/users/{userId}/restore', { params, body: { reason } })}
              done={after('Restored.')}
            />
            <Guarded
              label="Purge now"
              confirmText={u.email}
              effect={
                <>
                  Removes the account, the boards it owns with their items, events, tokens and restore points, its
                  memberships and sessions, now and for good. Audit rows stay.
                </>
              }
              run={(reason, confirm) =>
                client.post('/api/admin/users/{userId}/purge', { params, body: { reason, confirm } })
              }
              done={() => navigate('/admin/users')}
            />
          </>
        )}
        <Contact userId={u.id} email={u.email} sent={detail.reload} />
      </div>
      <div class="grid2">
        <section class="panel">
          <h2>Boards ({d.boards.length})</h2>
          <Boards boards={d.boards} />
        </section>
        <section class="panel">
          <h2>
            Billing{' '}
            <a class="small" href={`/admin/money/${u.id}`}>
              money actions
            </a>
          </h2>
          <Rows rows={d.billing} empty="No billing records." />
        </section>
      </div>
      <section class="panel">
        <h2>Tokens ({d.tokens.length})</h2>
        {d.tokens.length ? (
          <div class="scroll-x">
            <table class="list dense">
              <thead>
                <tr>
                  <th>name</th>
                  <th>prefix</th>
                  <th>scope</th>
                  <th>role</th>
                  <th>board</th>
                  <th>created</th>
                  <th>last used</th>
                  <th>expires</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {d.tokens.map((t) => (
                  <tr key={t.id} class={t.revoked ? 'muted' : ''}>
                    <td title={t.id}>{t.name}</td>
                    <td>
                      <code>{t.prefix}</code>
                    </td>
                    <td>{t.scope}</td>
                    <td>{t.role ?? '—'}</td>
                    <td>
                      {t.projectId ? (d.boards.find((b) => b.projectId === t.projectId)?.name ?? t.projectId) : '—'}
                    </td>
                    <td>{ago(t.createdAt)}</td>
                    <td>{ago(t.lastUsedAt)}</td>
                    <td>{t.expiresAt ? t.expiresAt.slice(0, 10) : 'never'}</td>
                    <td>
                      {t.revoked ? (
                        'revoked'
                      ) : (
                        <Guarded
                          label="Revoke"
                          effect={
                            <>
                              The token {t.name} ({t.prefix}…) stops working now and its sockets close; the account’s
                              other credentials stay.
                            </>
                          }
                          run={(reason) =>
                            client.delete('/api/admin/tokens/{tokenId}', {
                              params: { path: { tokenId: t.id } },
                              body: { reason },
                            })
                          }
                          done={after(`Revoked the token ${t.name}.`)}
                        />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <p class="muted">No tokens.</p>
        )}
      </section>
      {/* One above the other: each row names accounts by email, too wide for half the page. */}
      <section class="panel">
        <h2>Audit: about this account</h2>
        <Rows
          rows={d.audit.about as unknown as Record<string, unknown>[]}
          empty="Nothing yet."
          columns={['at', 'actor', 'action', 'data']}
          show={auditCells(d.audit.accounts)}
        />
      </section>
      <section class="panel">
        <h2>Audit: by this account</h2>
        <Rows
          rows={d.audit.by as unknown as Record<string, unknown>[]}
          empty="Nothing yet."
          columns={['at', 'action', 'target', 'projectId']}
          show={auditCells(d.audit.accounts)}
        />
      </section>
    </section>
  );
}

type Board = Reply<'/api/admin/users/{userId}', 'get'>['boards'][number];

/** The account's boards by name, each with its owner (boards of different accounts share names: "My board"); ids on hover. */
function Boards({ boards }: { boards: Board[] }) {
  if (!boards.length) return <p class="muted">No boards.</p>;
  return (
    <div class="scroll-x">
      <table class="list dense">
        <thead>
          <tr>
            <th>name</th>
            <th>owner</th>
            <th>role</th>
            <th>plan</th>
            <th>closed</th>
          </tr>
        </thead>
        <tbody>
          {boards.map((b) => (
            <tr key={b.projectId} data-board={b.projectId}>
              <td title={b.projectId}>{b.name}</td>
              <td title={b.ownerId}>
                {b.owned ? (
                  <span class="muted">this account</span>
                ) : (
                  <a href={`/admin/users/${b.ownerId}`}>{b.ownerEmail ?? b.ownerId.slice(0, 8)}</a>
                )}
              </td>
              <td>{b.role}</td>
              <td>{b.plan}</td>
              <td>{b.closed ? 'closed' : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const plural = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;

function Contact({ userId, email, sent }: { userId: string; email: string; sent: () => void }) {
  const [open, setOpen] = useState(false);
  const [subject, setSubject] = useState('');
  const [text, setText] = useState('');
  const send = useAction(() =>
    client.post('/api/admin/users/{userId}/contact', { params: { path: { userId } }, body: { subject, text } }),
  );
  if (!open) {
    return (
      <button type="button" onClick={() => (setOpen(true), send.reset())}>
        Contact
      </button>
    );
  }
  const go = async () => {
    if (!(await send.go())) return;
    // Sent: the form empties (a second click would mail them again) and the audit shows the row.
    setSubject('');
    setText('');
    sent();
  };
  return (
    <div class="guard contact">
      <p class="effect">
        A mail to <strong>{email}</strong> from the service, kept in the audit log with its subject and text.
      </p>
      <Form
        onSubmit={() => void go()}
        pending={send.pending}
        error={send.error}
        submit="Send mail"
        success={send.done ? `Sent to ${send.done.to}.` : null}
      >
        <Field label="Subject" value={subject} onInput={setSubject} maxLength={200} required />
        <label class="field">
          <span>Text</span>
          <textarea
            name="text"
            value={text}
            maxLength={10000}
            required
            onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
          />
        </label>
      </Form>
      <button type="button" onClick={() => setOpen(false)}>
        Close
      </button>
    </div>
  );
}
