import { get, post } from '../api';
import { onSubmitted, useAction } from '../components/action';
import { Choice, Field, FormError } from '../components/field';
import { useLoad } from '../components/load';
import { usd } from '../format';
import type { Meter, Plan, PlanMeterPrice, Seller, Service } from '../types';

/** A seller's services, each with its meters and its plans with their per-meter prices. */
export function Services({ seller }: { seller: Seller }) {
  const services = useLoad(() => get<{ services: Service[] }>(`/services?sellerId=${seller.id}`), seller.id);
  const action = useAction();
  const create = onSubmitted(action, (values) => post('/services', { sellerId: seller.id, ...values }), services.reload);
  return (
    <div class="card">
      <h2>Services</h2>
      {(services.data?.services ?? []).map((service) => (
        <ServiceBlock key={service.id} service={service} />
      ))}
      <form onSubmit={create} class="inline-form" aria-label="New service">
        <Field label="Service name" name="name" required action={action} />
        <Field label="Service slug" name="slug" required action={action} />
        <FormError action={action} />
        <button type="submit">Add service</button>
      </form>
    </div>
  );
}

function ServiceBlock({ service }: { service: Service }) {
  const meters = useLoad(() => get<{ meters: Meter[] }>(`/meters?serviceId=${service.id}`), service.id);
  const plans = useLoad(() => get<{ plans: Plan[] }>(`/plans?serviceId=${service.id}`), service.id);
  const meterAction = useAction();
  const planAction = useAction();
  const addMeter = onSubmitted(meterAction, (values) => post('/meters', { serviceId: service.id, ...values }), meters.reload);
  const addPlan = onSubmitted(planAction, (values) => post('/plans', { serviceId: service.id, ...values }), plans.reload);
  const meterList = meters.data?.meters ?? [];
  return (
    <section class="service" aria-label={`Service ${service.name}`}>
      <h3>
        {service.name} <code>{service.slug}</code>
      </h3>
      <h4>Meters</h4>
      <ul class="plain">
        {meterList.map((m) => (
          <li key={m.id}>
            <code>{m.key}</code> per {m.unit}
          </li>
        ))}
      </ul>
      <form onSubmit={addMeter} class="inline-form" aria-label={`New meter of ${service.name}`}>
        <Field label="Meter key" name="key" required action={meterAction} />
        <Field label="Unit" name="unit" required action={meterAction} />
        <FormError action={meterAction} />
        <button type="submit">Add meter</button>
      </form>
      <h4>Plans</h4>
      {(plans.data?.plans ?? []).map((plan) => (
        <PlanPrices key={plan.id} plan={plan} meters={meterList} />
      ))}
      <form onSubmit={addPlan} class="inline-form" aria-label={`New plan of ${service.name}`}>
        <Field label="Plan name" name="name" required action={planAction} />
        <Field label="Plan slug" name="slug" required action={planAction} />
        <Choice label="Billing" name="billingMode" action={planAction}>
          <option value="payg">pay as you go</option>
          <option value="subscription">subscription</option>
          <option value="subscription_usage">subscription + usage</option>
          <option value="credit">credit</option>
        </Choice>
        <FormError action={planAction} />
        <button type="submit">Add plan</button>
      </form>
    </section>
  );
}

function PlanPrices({ plan, meters }: { plan: Plan; meters: Meter[] }) {
  const prices = useLoad(() => get<{ planMeterPrices: PlanMeterPrice[] }>(`/plan-meter-prices?planId=${plan.id}`), plan.id);
  const action = useAction();
  const addPrice = onSubmitted(action, (values) => post('/plan-meter-prices', { planId: plan.id, ...values }), prices.reload);
  return (
    <div class="plan">
      <p>
        <strong>{plan.name}</strong> <code>{plan.slug}</code> · {plan.billingMode}
        {plan.interval !== 'none' && ` · per ${plan.interval}`}
      </p>
      <ul class="plain">
        {(prices.data?.planMeterPrices ?? []).map((p) => (
          <li key={p.id} data-testid="price">
            {p.meter.key}: {usd(p.priceUsd)} per {p.unitSize === 1 ? p.meter.unit : `${p.unitSize} ${p.meter.unit}s`}
            {p.includedUnits > 0 && `, ${p.includedUnits} included`}
          </li>
        ))}
      </ul>
      {meters.length > 0 && (
        <form onSubmit={addPrice} class="inline-form" aria-label={`New price on ${plan.name}`}>
          <Choice label="Meter" name="meterId" action={action}>
            {meters.map((m) => (
              <option key={m.id} value={m.id}>
                {m.key}
              </option>
            ))}
          </Choice>
          <Field label="Price (USD)" name="priceUsd" required inputMode="decimal" action={action} placeholder="0.01" />
          <FormError action={action} />
          <button type="submit">Add price</button>
        </form>
      )}
    </div>
  );
}
