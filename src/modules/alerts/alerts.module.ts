import type { KoshModule } from '../../app-deps.js';
import type { Ctx } from '../../platform/context.js';
import { onEvent, type EventPayload } from '../../platform/events/events.js';
import { usageAlertFold } from './alerts.jobs.js';
import { evaluateAlerts } from './alerts.service.js';
import { subscription } from '../events/index.js';

const SPEND = new Set(['invoice.finalized', 'invoice.voided']);
const CREDIT = new Set(['credit_grant.activated', 'credit_grant.drawn', 'credit_grant.expired', 'credit_grant.voided']);

function customerOf(event: EventPayload): string | null {
  const id = (event.data.object as { customer_id?: unknown }).customer_id;
  return typeof id === 'string' ? id : null;
}

/** Invoice and grant changes re-evaluate the spend and credit alerts of their customers, in the same transaction. */
async function evaluateOnChanges(ctx: Ctx, events: EventPayload[]): Promise<void> {
  const spend = new Set<string>();
  const credit = new Set<string>();
  for (const e of events) {
    const customer = customerOf(e);
    if (!customer) continue;
    if (SPEND.has(e.type)) spend.add(customer);
    if (CREDIT.has(e.type)) credit.add(customer);
  }
  if (spend.size > 0) await evaluateAlerts(ctx, [...spend], ['spend_threshold']);
  if (credit.size > 0) await evaluateAlerts(ctx, [...credit], ['credit_balance_below']);
}
const listener = (ctx: Ctx, event: EventPayload) => evaluateOnChanges(ctx, [event]);
listener.batch = evaluateOnChanges;

export const alertsModule: KoshModule = {
  name: 'alerts',
  // Ingestion queues its usage deltas; the worker folds them into the usage alerts every second (decision 0900).
  tickers: [usageAlertFold],
  init: () => onEvent(listener, subscription('alerts')),
};
