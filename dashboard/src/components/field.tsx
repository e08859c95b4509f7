import type { ComponentChildren, JSX } from 'preact';
import { useId } from 'preact/hooks';
import type { Action } from './action';

type FieldProps = JSX.InputHTMLAttributes<HTMLInputElement> & { label: string; name: string; action: Action; hint?: string };

/** A labelled input with the API's message for it beside it, tied to it for screen readers. */
export function Field({ label, name, action, hint, ...input }: FieldProps) {
  const error = action.fieldError(name);
  const id = useId();
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} name={name} aria-invalid={error ? 'true' : undefined} aria-describedby={described} {...input} />
      {hint && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
      {error && (
        <small id={`${id}-error`} class="field-error" role="alert">
          {error}
        </small>
      )}
    </div>
  );
}

/** A labelled select; the API's message for it beside it. */
export function Choice(props: { label: string; name: string; action: Action; children: ComponentChildren; value?: string }) {
  const error = props.action.fieldError(props.name);
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select id={id} name={props.name} value={props.value} aria-invalid={error ? 'true' : undefined}>
        {props.children}
      </select>
      {error && (
        <small class="field-error" role="alert">
          {error}
        </small>
      )}
    </div>
  );
}

/** The refusal as a whole, when no field carries it. */
export function FormError({ action }: { action: Action }) {
  const failure = action.failure;
  if (!failure || Object.keys(failure.fields).length > 0) return null;
  return (
    <p class="form-error" role="alert">
      {failure.message} <code>{failure.code}</code>
    </p>
  );
}
