// The impersonation banner, on every page of the board (so part of the main bundle, unlike the
// console): every response to an impersonation session carries X-Impersonated-By (the page's
// client keeps it), and then GET /api/admin/impersonation (the operator's own session, kept in a
// cookie sent only there) names the account; "End" gives the operator's session back and returns
// to the console.
import { useEffect, useState } from 'preact/hooks';
import { BoardClient, type Reply } from '@agent-board/client';
import { impersonatedBy } from '../api.js';
import './banner.css';

type Acting = NonNullable<Reply<'/api/admin/impersonation', 'get'>['impersonating']> & { csrfToken: string };

/**
 * The operator's own session speaks through a client of its own: its answers (the operator's CSRF
 * token, no X-Impersonated-By) must not reach the page's, which acts as the account.
 */
const operatorSide = new BoardClient({ baseUrl: location.origin, credentials: 'same-origin' });

export function ImpersonationBanner() {
  const [acting, setActing] = useState<Acting | null>(null);
  const [error, setError] = useState<string | null>(null);
  const operator = impersonatedBy.value;
  useEffect(() => {
    if (!operator) return void setActing(null);
    let live = true;
    void (async () => {
      const state = await operatorSide.get('/api/admin/impersonation');
      if (live && state.impersonating) setActing({ ...state.impersonating, csrfToken: state.csrfToken });
    })().catch(() => undefined);
    return () => void (live = false);
  }, [operator]);
  if (!acting) return null;
  const end = async () => {
    setError(null);
    const ended = await operatorSide
      .post('/api/admin/impersonation/end', { headers: { 'x-csrf-token': acting.csrfToken } })
      .then(
        () => true,
        () => false,
      );
    if (!ended) return setError('Ending failed; retry.');
    location.assign(`/admin/users/${encodeURIComponent(acting.accountId)}`);
  };
  return (
    <div class="impersonating" role="status" aria-label="Impersonation">
      <span>
        Acting as <strong>{acting.email ?? acting.accountId}</strong> until{' '}
        {new Date(acting.expiresAt).toISOString().slice(11, 16)} UTC: everything here is done in their name and audited.
      </span>
      {error ? <span>{error}</span> : null}
      <button type="button" onClick={() => void end()}>
        End
      </button>
    </div>
  );
}
