// A digest field for blind tests: paste `sha256:<64 hex>`, or type the answer and let the page hash
// it (Web Crypto, in the browser): only the digest ever leaves the page.
import { useState } from 'preact/hooks';

export const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** `sha256:<hex>` of the UTF-8 text exactly as given (no trimming), or null where Web Crypto is missing (a page not served over https or localhost). */
export async function sha256Digest(text: string): Promise<string | null> {
  if (!globalThis.crypto?.subtle) return null;
  const bytes = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  return `sha256:${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

export function DigestField(props: {
  label: string;
  name: string;
  value: string;
  onChange: (digest: string) => void;
  required?: boolean;
  answerLabel?: string;
}) {
  const [answer, setAnswer] = useState('');
  const [unavailable, setUnavailable] = useState(false);
  const hash = async (text: string) => {
    setAnswer(text);
    if (!text) return props.onChange('');
    const digest = await sha256Digest(text);
    if (digest === null) setUnavailable(true);
    else props.onChange(digest);
  };
  return (
    <div class="digest">
      <label class="field">
        <span>{props.answerLabel ?? 'Answer'}</span>
        <textarea
          name={`${props.name}-answer`}
          class="short"
          value={answer}
          onInput={(e) => void hash((e.target as HTMLTextAreaElement).value)}
        />
        <small>
          {unavailable
            ? 'This page cannot hash here (Web Crypto needs https): paste the digest below.'
            : 'Hashed in your browser (SHA-256 of the text exactly as typed); only the digest below is sent, never the answer.'}
        </small>
      </label>
      <label class="field">
        <span>{props.label}</span>
        <input
          name={props.name}
          value={props.value}
          required={props.required}
          pattern="sha256:[0-9a-f]{64}"
          placeholder="sha256:<64 hex digits>"
          spellcheck={false}
          class="mono"
          onInput={(e) => (setAnswer(''), props.onChange((e.target as HTMLInputElement).value.trim()))}
        />
      </label>
    </div>
  );
}
