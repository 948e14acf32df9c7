// The operator console (/admin): loaded lazily by the page, and served only to operators (the
// server's operator gate answers its pages and its chunk, dist/web/admin/assets, with 404 to
// anyone else: src/routes/web.ts).
import './admin.css';
import { match, path } from '../router.js';
import { AbuseSection } from './abuse.js';
import { AuditSection } from './audit.js';
import { OverviewSection } from './watch.js';
import { FeedbackSection } from './feedback.js';
import { MoneySection } from './money.js';
import { LiveSection } from './live.js';
import { UserPage, UsersSection } from './users.js';

const SECTIONS = [
  ['live', 'Live'],
  ['users', 'Users'],
  ['overview', 'Overview'],
  ['money', 'Money'],
  ['abuse', 'Abuse'],
  ['audit', 'Audit'],
  ['feedback', 'Feedback'],
] as const;

export function Console() {
  const pathname = path.value.split('?')[0]!;
  const user = match('/admin/users/:userId');
  const payer = match('/admin/money/:userId');
  const section = user ? 'users' : payer ? 'money' : (match('/admin/:section')?.section ?? 'live');
  // Each view has its h1, where focus lands after a navigation (ui/heading.ts); an account's own
  // page and its billing are headed by the account's address instead.
  const heading = user || payer ? null : (SECTIONS.find(([id]) => id === section)?.[1] ?? 'No such section');
  return (
    <div class="console">
      <nav class="tabs console-nav" aria-label="Console">
        <strong class="console-title">Operator console</strong>
        {SECTIONS.map(([id, label]) => (
          <a
            key={id}
            href={`/admin/${id}`}
            class={section === id ? 'active' : ''}
            aria-current={section === id ? 'page' : undefined}
          >
            {label}
          </a>
        ))}
      </nav>
      {heading ? <h1 class="console-heading">{heading}</h1> : null}
      {user ? (
        <UserPage userId={user.userId!} />
      ) : section === 'live' ? (
        <LiveSection />
      ) : section === 'users' ? (
        <UsersSection />
      ) : section === 'overview' ? (
        <OverviewSection />
      ) : section === 'money' ? (
        <MoneySection userId={payer?.userId ?? null} />
      ) : section === 'abuse' ? (
        <AbuseSection />
      ) : section === 'audit' ? (
        <AuditSection />
      ) : section === 'feedback' ? (
        <FeedbackSection />
      ) : (
        <p class="muted">
          No section <code>{pathname}</code>.
        </p>
      )}
    </div>
  );
}
