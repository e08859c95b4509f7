import { post } from '../api';
import { formValues, useAction } from '../components/action';
import { Field, FormError } from '../components/field';

/** Email and password; the answer sets the session cookies, and the token in the body is dropped. */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    const values = formValues(event.currentTarget as HTMLFormElement);
    const done = await action.run(() => post('/auth/sign-in', { email: values.email ?? '', password: values.password ?? '' }));
    if (done) onSignedIn();
  };
  return (
    <main class="sign-in">
      <h1>Sign in to hub</h1>
      <form onSubmit={submit}>
        <Field label="Email" name="email" type="email" autoComplete="username" required action={action} />
        <Field label="Password" name="password" type="password" autoComplete="current-password" required action={action} />
        <FormError action={action} />
        <button type="submit" disabled={action.busy}>
          Sign in
        </button>
      </form>
      <p class="hint">
        No account yet? <code>npx hub bootstrap --email you@example.com --password …</code> makes the first one.
      </p>
    </main>
  );
}
