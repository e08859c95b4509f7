import { useState } from 'preact/hooks';

/** A secret the API shows only in this answer: the value, a copy button, and the warning. */
export function ShownOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard?.writeText(value).catch(() => undefined);
    setCopied(true);
  };
  return (
    <div class="shown-once" role="status">
      <p>
        <strong>{label}</strong> — shown this once; hub keeps only a hash or a sealed copy.
      </p>
      <code class="secret" data-testid="shown-once">
        {value}
      </code>
      <div class="row">
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
