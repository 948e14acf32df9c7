// Sign in and sign up: on success the session's CSRF token is kept (api.ts) and the page moves on
// to where the person was going (`?next=`, kept across the switch between the two pages).
import { useState } from 'preact/hooks';
import { client } from '../api.js';
import { navigate, queryParam } from '../router.js';
import { signedIn } from '../session.js';
import { Field, Form, useAction } from '../ui/kit.js';

/** Where to go after signing in: a same-site path only. */
const next = (): string => {
  const to = queryParam('next');
  return to && to.startsWith('/') && !to.startsWith('//') ? to : '/projects';
};

export function SignInPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction(async () => {
    const res = await client.post('/api/auth/login', { body: { email, password } });
    signedIn(res.account);
    navigate(next());
  });
  return (
    <div class="narrow panel">
      <h1>Sign in</h1>
      <Form onSubmit={() => void action.go()} pending={action.pending} error={action.error} submit="Sign in">
        <Field
          label="Email"
          type="email"
          name="email"
          value={email}
          onInput={setEmail}
          required
          autocomplete="username"
        />
        <Field
          label="Password"
          type="password"
          name="password"
          value={password}
          onInput={setPassword}
          required
          autocomplete="current-password"
        />
      </Form>
      <p class="row">
        <a href={queryParam('next') ? `/signup?next=${encodeURIComponent(next())}` : '/signup'}>Create an account</a>
        <span class="grow" />
        <a href="/forgot-password">Forgot your password?</a>
      </p>
    </div>
  );
}

export function SignUpPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction(async () => {
    const res = await client.post('/api/auth/signup', { body: { email, password } });
    signedIn(res.account);
    navigate(next());
  });
  return (
    <div class="narrow panel">
      <h1>Create an account</h1>
      <Form onSubmit={() => void action.go()} pending={action.pending} error={action.error} submit="Create account">
        <Field
          label="Email"
          type="email"
          name="email"
          value={email}
          onInput={setEmail}
          required
          autocomplete="username"
        />
        <Field
          label="Password"
          type="password"
          name="password"
          value={password}
          onInput={setPassword}
          required
          minLength={12}
          maxLength={128}
          autocomplete="new-password"
          hint="12 to 128 characters; every one counts."
        />
      </Form>
      <p>
        Already have one?{' '}
        <a href={queryParam('next') ? `/signin?next=${encodeURIComponent(next())}` : '/signin'}>Sign in</a>
      </p>
    </div>
  );
}
