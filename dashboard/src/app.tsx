import { useCallback, useEffect, useState } from 'preact/hooks';
import { get, post, put, signedOut } from './api';
import { useLoad } from './components/load';
import { Agents } from './pages/agents';
import { Analytics } from './pages/analytics';
import { ApiKeys } from './pages/api-keys';
import { Catalog } from './pages/catalog';
import { Customers } from './pages/customers';
import { Members } from './pages/members';
import { SignIn } from './pages/sign-in';
import { linkProps, navigate, usePath } from './route';
import type { Organization, Seller, User } from './types';

type Me = { user: User; currentOrganizationId: string | null };

const PAGES = [
  { path: '/', label: 'Analytics' },
  { path: '/catalog', label: 'Catalog' },
  { path: '/customers', label: 'Customers' },
  { path: '/agents', label: 'What agents see' },
  { path: '/settings/api-keys', label: 'API keys' },
  { path: '/settings/members', label: 'Members' },
];

/** Signed in or not: the session is the cookie, so asking who we are is the only way to know. */
export function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const refresh = useCallback(() => get<Me>('/users/me').then(setMe, () => setMe(null)), []);
  useEffect(() => {
    refresh();
    const out = () => setMe(null);
    signedOut.addEventListener('signed-out', out);
    return () => signedOut.removeEventListener('signed-out', out);
  }, [refresh]);
  if (me === undefined) return <p class="loading">Loading…</p>;
  if (me === null) return <SignIn onSignedIn={refresh} />;
  return <Shell me={me} onSignedOut={() => setMe(null)} onSwitched={refresh} />;
}

function Shell({ me, onSignedOut, onSwitched }: { me: Me; onSignedOut: () => void; onSwitched: () => void }) {
  const path = usePath();
  const orgs = useLoad(() => get<{ organizations: Organization[] }>('/organizations'), me.currentOrganizationId ?? '');
  const sellers = useLoad(() => get<{ sellers: Seller[] }>('/sellers'), `${me.currentOrganizationId}`);
  const [sellerId, setSellerId] = useState(localStorage.getItem('hub.seller') ?? '');
  const list = sellers.data?.sellers ?? [];
  const seller = list.find((s) => s.id === sellerId) ?? list[0];
  const role = orgs.data?.organizations.find((o) => o.current)?.role;

  const switchOrg = async (organizationId: string) => {
    await put('/organizations/current', { organizationId });
    onSwitched();
  };
  const chooseSeller = (id: string) => {
    localStorage.setItem('hub.seller', id);
    setSellerId(id);
  };
  const signOut = async () => {
    await post('/auth/sign-out').catch(() => undefined);
    onSignedOut();
    navigate('/');
  };

  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <strong class="brand">hub</strong>
        <label class="inline">
          <span>Organization</span>
          <select value={me.currentOrganizationId ?? ''} onChange={(e) => switchOrg(e.currentTarget.value)}>
            {(orgs.data?.organizations ?? []).map((o) => (
              <option value={o.id} key={o.id}>
                {o.name}
              </option>
            ))}
          </select>
        </label>
        <label class="inline">
          <span>Seller</span>
          <select value={seller?.id ?? ''} onChange={(e) => chooseSeller(e.currentTarget.value)} disabled={list.length === 0}>
            {list.length === 0 && <option value="">none yet</option>}
            {list.map((s) => (
              <option value={s.id} key={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </label>
        <span class="who">{me.user.email}</span>
        <button type="button" class="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav aria-label="Dashboard">
        {PAGES.map((p) => (
          <a key={p.path} {...linkProps(p.path)} aria-current={path === p.path ? 'page' : undefined}>
            {p.label}
          </a>
        ))}
      </nav>
      <main id="main">
        <Page path={path} seller={seller} sellers={list} role={role} reloadSellers={sellers.reload} chooseSeller={chooseSeller} />
      </main>
    </div>
  );
}

type PageProps = {
  path: string;
  seller: Seller | undefined;
  sellers: Seller[];
  role: 'admin' | 'member' | undefined;
  reloadSellers: () => void;
  chooseSeller: (id: string) => void;
};

function Page({ path, seller, sellers, role, reloadSellers, chooseSeller }: PageProps) {
  if (path === '/catalog') return <Catalog seller={seller} sellers={sellers} reloadSellers={reloadSellers} chooseSeller={chooseSeller} />;
  if (path === '/settings/api-keys') return <ApiKeys isAdmin={role === 'admin'} />;
  if (path === '/settings/members') return <Members isAdmin={role === 'admin'} />;
  if (!seller) return <NoSeller />;
  if (path === '/customers') return <Customers seller={seller} />;
  if (path === '/agents') return <Agents seller={seller} />;
  return <Analytics seller={seller} />;
}

function NoSeller() {
  return (
    <section>
      <h1>Welcome</h1>
      <p>
        This organization sells nothing yet. <a {...linkProps('/catalog')}>Create a seller</a> to get a pay URL.
      </p>
    </section>
  );
}
