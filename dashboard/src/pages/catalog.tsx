import { post } from '../api';
import { formValues, useAction } from '../components/action';
import { Field, FormError } from '../components/field';
import type { Seller } from '../types';
import { SellerKeys } from './seller-keys';
import { Services } from './services';

type Props = { seller: Seller | undefined; sellers: Seller[]; reloadSellers: () => void; chooseSeller: (id: string) => void };

/** Catalog: the organization's sellers, and the chosen seller's secrets, services, meters, plans and prices. */
export function Catalog({ seller, sellers, reloadSellers, chooseSeller }: Props) {
  return (
    <section>
      <h1>Catalog</h1>
      {seller && <SellerFacts seller={seller} />}
      {seller && <SellerKeys seller={seller} />}
      {seller && <Services seller={seller} />}
      <details class="card" open={sellers.length === 0}>
        <summary>Create a seller</summary>
        <CreateSeller
          onCreated={(id) => {
            chooseSeller(id);
            reloadSellers();
          }}
        />
      </details>
    </section>
  );
}

function SellerFacts({ seller }: { seller: Seller }) {
  return (
    <div class="card">
      <h2>{seller.name}</h2>
      <dl class="facts">
        <dt>Pay URL host</dt>
        <dd>
          <code data-testid="pay-host">{seller.payHost}</code>
        </dd>
        <dt>Upstream</dt>
        <dd>
          <code>{seller.upstreamBaseUrl}</code>
        </dd>
        <dt>Payout wallet</dt>
        <dd>{seller.payToAddress ? <code>{seller.payToAddress}</code> : 'not set: paid calls cannot be taken'}</dd>
        <dt>Networks</dt>
        <dd>{seller.networks.join(', ') || 'hub’s own'}</dd>
        <dt>Hostnames</dt>
        <dd>{seller.hostnames.join(', ') || 'none'}</dd>
      </dl>
    </div>
  );
}

/** The seller form; lists (networks, hostnames) are typed comma-separated and sent as arrays. */
function CreateSeller({ onCreated }: { onCreated: (id: string) => void }) {
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const { networks, hostnames, ...rest } = formValues(form);
    const list = (text: string | undefined) => (text ? text.split(',').map((item) => item.trim()) : undefined);
    const answer = await action.run(() =>
      post<{ seller: Seller }>('/sellers', { ...rest, networks: list(networks), hostnames: list(hostnames) }),
    );
    if (answer) {
      form.reset();
      onCreated(answer.seller.id);
    }
  };
  return (
    <form onSubmit={submit}>
      <Field label="Name" name="name" required action={action} />
      <Field label="Slug" name="slug" required action={action} hint="The pay URL is {slug}.{pay domain}" />
      <Field label="Upstream base URL" name="upstreamBaseUrl" type="url" required action={action} placeholder="https://api.example.com" />
      <Field label="Payout wallet" name="payToAddress" action={action} placeholder="0x…" />
      <Field label="Networks" name="networks" action={action} hint="CAIP-2 ids, comma-separated (eip155:8453)" />
      <Field label="Hostnames" name="hostnames" action={action} hint="Custom hostnames, comma-separated" />
      <FormError action={action} />
      <button type="submit" disabled={action.busy}>
        Create seller
      </button>
    </form>
  );
}
