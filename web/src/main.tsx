// The browser board: one document, routed in the page (src/routes/web.ts serves it for every page path).
import { render } from 'preact';
import { lazy, Suspense } from 'preact/compat';
import { useEffect } from 'preact/hooks';
import './styles.css';
import { match, navigate, path } from './router.js';
import { loadSession, me, signOut } from './session.js';
import { SignInPage, SignUpPage } from './pages/auth.js';
import { ForgotPage, ResetPage, VerifyPage } from './pages/recovery.js';
import { ProjectsPage } from './pages/projects.js';
import { BoardPage } from './pages/board.js';
import { ItemPage } from './pages/item.js';
import { AccountPage } from './pages/account.js';
import { InvitationPage } from './pages/invitation.js';
import { MembersPage } from './pages/sharing.js';
import { ClaimBoardPage } from './pages/onboarding.js';
import { DevicePage } from './pages/device.js';
import { ImpersonationBanner } from './admin/banner.js';
import { followHeadings } from './ui/heading.js';

/** The operator console: its code is fetched only here (the server sends it to operators alone). */
const Console = lazy(() => import('./admin/admin-console.js').then((m) => m.Console).catch(() => NotFound));

/** A board's charts: the page and uPlot load only when opened. */
const InsightsPage = lazy(() => import('./pages/insights.js'));

/** Pages anyone may open; every other page needs a session. */
const PUBLIC = ['/signin', '/signup', '/forgot-password', '/reset-password', '/verify-email'];

function Page() {
  const current = path.value;
  const pathname = current.split('?')[0]!;
  const account = me.value;
  if (account === undefined) return <p class="muted">Loading…</p>;
  if (!account && !PUBLIC.includes(pathname)) {
    navigate(`/signin?next=${encodeURIComponent(current)}`, true);
    return null;
  }
  if (pathname === '/signin') return <SignInPage />;
  if (pathname === '/signup') return <SignUpPage />;
  if (pathname === '/forgot-password') return <ForgotPage />;
  if (pathname === '/reset-password') return <ResetPage />;
  if (pathname === '/verify-email') return <VerifyPage />;
  if (pathname === '/' || pathname === '/projects') return <ProjectsPage />;
  if (pathname === '/device') return <DevicePage />;
  let params = match('/invitations/:invitationId');
  if (params) return <InvitationPage invitationId={params.invitationId!} />;
  params = match('/boards/:projectId/members');
  if (params) return <MembersPage projectId={params.projectId!} />;
  params = match('/boards/:projectId/claim');
  if (params) return <ClaimBoardPage projectId={params.projectId!} />;
  params = match('/boards/:projectId/insights');
  if (params)
    return (
      <Suspense fallback={<p class="muted">Loading…</p>}>
        <InsightsPage projectId={params.projectId!} />
      </Suspense>
    );
  params = match('/boards/:projectId/items/:workId');
  if (params) return <ItemPage projectId={params.projectId!} workId={params.workId!} />;
  params = match('/boards/:projectId');
  if (params) return <BoardPage projectId={params.projectId!} />;
  if (pathname === '/admin' || pathname.startsWith('/admin/')) {
    return (
      <Suspense fallback={<p class="muted">Loading…</p>}>
        <Console />
      </Suspense>
    );
  }
  params = match('/account/:section');
  if (params || pathname === '/account') return <AccountPage section={params?.section ?? 'profile'} />;
  return <NotFound />;
}

function NotFound() {
  const pathname = path.value.split('?')[0]!;
  return (
    <div class="narrow panel">
      <h1>Not found</h1>
      <p>
        Nothing lives at <code>{pathname}</code>. <a href="/projects">Your boards</a>
      </p>
    </div>
  );
}

function App() {
  useEffect(() => {
    void loadSession();
  }, []);
  const account = me.value;
  return (
    <>
      <header class="topbar">
        <a class="brand" href="/projects">
          Agent Board
        </a>
        {account ? <a href="/projects">Boards</a> : null}
        <span class="spacer" />
        {account ? (
          <>
            <a class="who" href="/account/profile" title={account.email}>
              {account.displayName ?? account.email}
            </a>
            <button type="button" onClick={() => void signOut().then(() => navigate('/signin'))}>
              Sign out
            </button>
          </>
        ) : (
          <a href="/signin">Sign in</a>
        )}
      </header>
      <ImpersonationBanner />
      <main>
        <Page />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
followHeadings(document.querySelector('main')!);
