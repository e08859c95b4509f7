import { useEffect, useState } from 'preact/hooks';

/** The dashboard's pages are paths under /dashboard/, moved between without reloading. */
export const BASE = '/dashboard';

export function navigate(to: string): void {
  history.pushState(null, '', `${BASE}${to}`);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** The current page's path below /dashboard (`/`, `/catalog`, `/settings/api-keys`). */
export function usePath(): string {
  const [path, setPath] = useState(current);
  useEffect(() => {
    const update = () => setPath(current());
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return path;
}

function current(): string {
  const below = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '/';
  return below.replace(/\/+$/, '') || '/';
}

/** A link to a page of the dashboard: a real link (new tab, keyboard), followed in place. */
export function linkProps(to: string) {
  return {
    href: `${BASE}${to}`,
    onClick: (event: MouseEvent) => {
      if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
      event.preventDefault();
      navigate(to);
    },
  };
}
