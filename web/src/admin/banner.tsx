// The impersonation banner, on every page of the board (so part of the main bundle, unlike the
// console): every response to an impersonation session carries X-Impersonated-By (the page's api()
// keeps it), and then GET /api/admin/impersonation (the operator's own session, kept in a cookie
// sent only there) names the account; "End" gives the operator's session back and returns to the
// console.
import { useEffect, useState } from 'preact/hooks';
import { impersonatedBy } from '../api.js';
import './banner.css';

interface Acting {
  accountId: string;
  email: string | null;
  expiresAt: string;
  csrfToken: string;
}

export function ImpersonationBanner() {
  const [acting, setActing] = useState<Acting | null>(null);
  const [error, setError] = useState<string | null>(null);
  const operator = impersonatedBy.value;
  useEffect(() => {
    if (!operator) return void setActing(null);
    let live = true;
    void (async () => {
      const state = await fetch('/api/admin/impersonation', { credentials: 'same-origin' });
      if (!state.ok || !live) return;
      const body = (await state.json()) as { impersonating: Omit<Acting, 'csrfToken'> | null; csrfToken: string };
      if (body.impersonating) setActing({ ...body.impersonating, csrfToken: body.csrfToken });
    })().catch(() => undefined);
    return () => void (live = false);
  }, [operator]);
  if (!acting) return null;
  const end = async () => {
    setError(null);
    const res = await fetch('/api/admin/impersonation/end', { method: 'POST', credentials: 'same-origin', headers: { 'x-csrf-token': acting.csrfToken } }).catch(() => null);
    if (!res?.ok) return setError('Ending failed; retry.');
    location.assign(`/admin/users/${encodeURIComponent(acting.accountId)}`);
  };
  return (
    <div class="impersonating" role="status" aria-label="Impersonation">
      <span>
        Acting as <strong>{acting.email ?? acting.accountId}</strong> until {new Date(acting.expiresAt).toLocaleTimeString()}: everything here is done in their name and audited.
      </span>
      {error ? <span>{error}</span> : null}
      <button type="button" onClick={() => void end()}>
        End
      </button>
    </div>
  );
}
