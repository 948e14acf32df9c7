// Mailed links and the way to ask for one: forgot password, reset password, verify email. The
// mailer puts the single-use token in the URL hash (`#token=…`), so it never reaches a server log.
import { useLayoutEffect, useState } from 'preact/hooks';
import { ApiError, client, csrfToken } from '../api.js';
import { me, signedIn } from '../session.js';
import { ErrorNote, Field, Form, useAction } from '../ui/kit.js';

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 128;

/** A refusal made in the page, shown like the server's (message, fix, code). */
export const refuse = (code: string, message: string, fix: string): ApiError => new ApiError(0, code, message, fix);

/** Length as the server counts it: code points, not UTF-16 units. */
export const charCount = (s: string): number => [...s].length;

/** The server's password rule, plus the confirmation matching. */
export function checkNewPassword(password: string, confirm: string): void {
  const n = charCount(password);
  if (n < PASSWORD_MIN || n > PASSWORD_MAX)
    throw refuse(
      'INVALID_PASSWORD',
      `The password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters (it has ${n}).`,
      'Choose a longer (or shorter) password; every character counts.',
    );
  if (password !== confirm)
    throw refuse('PASSWORD_MISMATCH', 'The two new passwords differ.', 'Type the same new password in both fields.');
}

/**
 * "New password" and "Confirm password", for reset and change. The rule is a paragraph, not a
 * Field hint, so the labels stay exact (a hint inside the label joins the input's name).
 */
export function NewPasswordFields(props: {
  password: string;
  confirm: string;
  onPassword: (v: string) => void;
  onConfirm: (v: string) => void;
}) {
  return (
    <>
      <p class="muted">
        The new password is {PASSWORD_MIN} to {PASSWORD_MAX} characters; every one counts.
      </p>
      <Field
        label="New password"
        type="password"
        name="newPassword"
        value={props.password}
        onInput={props.onPassword}
        required
        minLength={PASSWORD_MIN}
        autocomplete="new-password"
      />
      <Field
        label="Confirm password"
        type="password"
        name="confirmPassword"
        value={props.confirm}
        onInput={props.onConfirm}
        required
        minLength={PASSWORD_MIN}
        autocomplete="new-password"
      />
    </>
  );
}

/** The link's token, from `#token=…`. */
const linkToken = (): string | null => new URLSearchParams(location.hash.slice(1)).get('token') || null;

/** Drops the used token from the address bar, so a reload does not replay a spent link. */
const forgetLinkToken = (): void => history.replaceState(history.state, '', location.pathname + location.search);

/** A link without its token: say so and offer the way to a new one. */
function MissingToken({ title, again }: { title: string; again: { href: string; label: string } }) {
  return (
    <div class="narrow panel">
      <h1>{title}</h1>
      <ErrorNote
        error={refuse(
          'INVALID_LINK_TOKEN',
          'This link is incomplete: it carries no token.',
          'Open the link from the mail exactly as sent, or ask for a new one.',
        )}
      />
      <p>
        <a href={again.href}>{again.label}</a>
      </p>
    </div>
  );
}

export function ForgotPage() {
  const [email, setEmail] = useState('');
  const action = useAction(async () => {
    await client.post('/api/auth/forgot-password', { body: { email: email.trim() } });
    return 'If the address has an account, a link is on its way. It works once, within an hour.';
  });
  return (
    <div class="narrow panel">
      <h1>Forgot your password?</h1>
      <p class="muted">Enter the address you sign in with; we mail a link to set a new password.</p>
      <Form
        onSubmit={() => void action.go()}
        pending={action.pending}
        error={action.error}
        success={action.done}
        submit="Send reset link"
      >
        <Field
          label="Email"
          type="email"
          name="email"
          value={email}
          onInput={setEmail}
          required
          autocomplete="username"
        />
      </Form>
      <p>
        <a href="/signin">Back to sign in</a>
      </p>
    </div>
  );
}

export function ResetPage() {
  const [token] = useState(linkToken);
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const action = useAction(async () => {
    checkNewPassword(password, confirm);
    await client.post('/api/auth/reset-password', { body: { token: token!, newPassword: password } });
    forgetLinkToken();
    // Every session of the account is revoked, this browser's included.
    if (me.value) {
      csrfToken.value = null;
      me.value = null;
    }
    return 'Your password is set. Sign in with it.';
  });
  if (!token)
    return (
      <MissingToken
        title="Set a new password"
        again={{ href: '/forgot-password', label: 'Ask for a new reset link' }}
      />
    );
  return (
    <div class="narrow panel">
      <h1>Set a new password</h1>
      {action.done ? (
        <>
          <div class="note ok" role="status">
            {action.done}
          </div>
          <p>
            <a href="/signin">Sign in</a>
          </p>
        </>
      ) : (
        <>
          <Form
            onSubmit={() => void action.go()}
            pending={action.pending}
            error={action.error}
            submit="Set new password"
          >
            <NewPasswordFields password={password} confirm={confirm} onPassword={setPassword} onConfirm={setConfirm} />
          </Form>
          <p>
            <a href="/forgot-password">Ask for a new link</a>
          </p>
        </>
      )}
    </div>
  );
}

/** A confirmation link opened signed out waits here (this tab only) while its person signs in. */
const HELD_VERIFY_TOKEN = 'verify-email-token';

export function VerifyPage() {
  // The link proves the mailbox and the session the password: it is followed signed in as its account.
  const [token] = useState(() => linkToken() ?? sessionStorage.getItem(HELD_VERIFY_TOKEN));
  const action = useAction(async () => {
    const res = await client.post('/api/auth/verify-email', { body: { token: token! } });
    sessionStorage.removeItem(HELD_VERIFY_TOKEN);
    if (me.value && me.value.id === res.account.id) signedIn(res.account);
    return res.account;
  });
  const signedOut = me.value === null;
  // Before the page is painted: a person (or a screenshot) never sees the spent token in the address bar.
  useLayoutEffect(() => {
    if (!token) return;
    forgetLinkToken();
    if (signedOut) sessionStorage.setItem(HELD_VERIFY_TOKEN, token);
    else if (me.value) void action.go();
    // Once the session is known; the token is single-use.
  }, [signedOut, me.value?.id]);
  if (!token && me.value?.emailVerified) return <Confirmed email={me.value.email} />;
  if (!token)
    return <MissingToken title="Verify your email" again={{ href: '/projects', label: 'Go to your boards' }} />;
  if (action.done) return <Confirmed email={action.done.email} />;
  if (signedOut)
    return (
      <div class="narrow panel">
        <h1>Verify your email</h1>
        <p>Sign in to the account this address belongs to, and the link confirms it.</p>
        <p class="muted">The link shows the mailbox is yours; signing in shows the account is.</p>
        <p>
          <a href="/signin?next=/verify-email">Sign in to confirm</a>
        </p>
      </div>
    );
  return (
    <div class="narrow panel">
      <h1>Verify your email</h1>
      {action.error ? (
        <ErrorNote error={action.error} />
      ) : (
        <p class="muted" role="status" aria-busy="true">
          Confirming your address…
        </p>
      )}
      <p>
        <a href="/projects">Go to your boards</a>
      </p>
    </div>
  );
}

function Confirmed({ email }: { email: string }) {
  return (
    <div class="narrow panel">
      <h1>Verify your email</h1>
      <div class="note ok" role="status">
        {email} is confirmed.
      </div>
      <p>
        <a href="/projects">Go to your boards</a>
      </p>
    </div>
  );
}
