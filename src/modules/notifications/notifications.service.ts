import { sql } from 'kysely';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { Tx } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { SecretBox } from '../../platform/secrets/secrets.js';
import { toIso } from '../../platform/time.js';
import {
  NOTIFICATIONS,
  type CreateSmsConnectionBody,
  type EmailTemplate,
  type NotificationKind,
  type NotificationSettings,
  type PutTemplateBody,
  type SmsConnection,
} from './notifications.schemas.js';
import type { NotificationsTable, SmsConnectionsTable } from './notifications.tables.js';
import { smsProviders, type SmsCredentials, type SmsProvider } from './sms.js';
import { SAMPLE_DATA, TEMPLATE_NAMES, assertTemplateCompiles, defaultTemplate, type TemplateName, type TemplateSource } from './templates.js';
import './notifications.tables.js';

/** The dotted variables of a template, from its sample data. */
function variablesOf(name: TemplateName): string[] {
  const out: string[] = [];
  const walk = (value: unknown, prefix: string) => {
    if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(v, prefix ? `${prefix}.${k}` : k);
    else out.push(prefix);
  };
  walk(SAMPLE_DATA[name], '');
  return out.sort();
}

type OverrideRow = { name: string; subject: string; html: string; text: string | null; updated_at: Date };

function toTemplate(name: TemplateName, row: OverrideRow | undefined): EmailTemplate {
  const source = row ?? defaultTemplate(name);
  return {
    name,
    subject: source.subject,
    html: source.html,
    text: source.text,
    customized: row !== undefined,
    variables: variablesOf(name),
    updated_at: row ? toIso(row.updated_at) : null,
  };
}

async function overrides(tx: Tx, tenantId: string): Promise<Map<string, OverrideRow>> {
  const rows = await tx.selectFrom('email_templates').select(['name', 'subject', 'html', 'text', 'updated_at']).where('tenant_id', '=', tenantId).execute();
  return new Map(rows.map((r) => [r.name, r]));
}

export async function listEmailTemplates(ctx: ReadCtx): Promise<EmailTemplate[]> {
  const byName = await overrides(ctx.tx, ctx.tenantId);
  return TEMPLATE_NAMES.map((name) => toTemplate(name, byName.get(name)));
}

export async function getEmailTemplate(ctx: ReadCtx, name: TemplateName): Promise<EmailTemplate> {
  const row = await ctx.tx
    .selectFrom('email_templates')
    .select(['name', 'subject', 'html', 'text', 'updated_at'])
    .where('tenant_id', '=', ctx.tenantId)
    .where('name', '=', name)
    .executeTakeFirst();
  return toTemplate(name, row);
}

/** The source a tenant's mail is rendered from: its override, else the shipped file. */
export async function templateSource(tx: Tx, tenantId: string, name: TemplateName): Promise<TemplateSource> {
  const row = await tx
    .selectFrom('email_templates')
    .select(['subject', 'html', 'text'])
    .where('tenant_id', '=', tenantId)
    .where('name', '=', name)
    .executeTakeFirst();
  return row ?? defaultTemplate(name);
}

export function assertTemplateSource(source: { subject?: string; html?: string; text?: string | null }): void {
  if (source.subject !== undefined) {
    if (/[\r\n]/.test(source.subject)) throw errors.invalidField('subject', 'must be one line');
    assertTemplateCompiles('subject', source.subject);
  }
  if (source.html !== undefined) assertTemplateCompiles('html', source.html);
  if (typeof source.text === 'string') assertTemplateCompiles('text', source.text);
}

export async function putEmailTemplate(ctx: Ctx, name: TemplateName, body: PutTemplateBody): Promise<EmailTemplate> {
  assertTemplateSource(body);
  const row = { subject: body.subject, html: body.html, text: body.text ?? null, updated_at: ctx.now };
  await ctx.tx
    .insertInto('email_templates')
    .values({ tenant_id: ctx.tenantId, name, ...row, created_at: ctx.now })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doUpdateSet(row))
    .execute();
  return toTemplate(name, { name, ...row });
}

/** Back to the shipped default. */
export async function resetEmailTemplate(ctx: Ctx, name: TemplateName): Promise<EmailTemplate> {
  await ctx.tx.deleteFrom('email_templates').where('tenant_id', '=', ctx.tenantId).where('name', '=', name).execute();
  return toTemplate(name, undefined);
}

// ---- Settings ------------------------------------------------------------------------------

export async function getNotificationSettings(ctx: Pick<ReadCtx, 'tx' | 'tenantId'>): Promise<NotificationSettings> {
  const rows = await ctx.tx.selectFrom('notification_settings').select(['notification', 'enabled']).where('tenant_id', '=', ctx.tenantId).execute();
  const on = new Map(rows.map((r) => [r.notification, r.enabled]));
  return Object.fromEntries(NOTIFICATIONS.map((n) => [n, on.get(n) ?? false])) as NotificationSettings;
}

export async function updateNotificationSettings(ctx: Ctx, patch: Partial<NotificationSettings>): Promise<NotificationSettings> {
  const rows = Object.entries(patch)
    .filter(([, v]) => typeof v === 'boolean')
    .map(([notification, enabled]) => ({ tenant_id: ctx.tenantId, notification, enabled: enabled as boolean, updated_at: ctx.now }));
  if (rows.length > 0) {
    await ctx.tx
      .insertInto('notification_settings')
      .values(rows)
      .onConflict((oc) => oc.columns(['tenant_id', 'notification']).doUpdateSet({ enabled: sql`excluded.enabled`, updated_at: sql`excluded.updated_at` }))
      .execute();
  }
  return getNotificationSettings(ctx);
}

export async function isNotificationEnabled(tx: Tx, tenantId: string, notification: NotificationKind): Promise<boolean> {
  const row = await tx
    .selectFrom('notification_settings')
    .select('enabled')
    .where('tenant_id', '=', tenantId)
    .where('notification', '=', notification)
    .executeTakeFirst();
  return row?.enabled ?? false;
}

// ---- The log that makes each notification once ------------------------------------------------

export async function notificationExists(tx: Tx, tenantId: string, notification: string, dedupeKey: string): Promise<boolean> {
  const row = await tx
    .selectFrom('notifications')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('notification', '=', notification)
    .where('dedupe_key', '=', dedupeKey)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Records the notification; false when it was already recorded (a rerun of the job, or a
 * concurrent one that committed first): the caller then sends nothing.
 */
export async function recordNotification(
  ctx: Ctx,
  row: Pick<NotificationsTable, 'notification' | 'dedupe_key' | 'customer_id' | 'channel' | 'status' | 'recipient' | 'detail'>,
): Promise<boolean> {
  const inserted = await ctx.tx
    .insertInto('notifications')
    .values({ tenant_id: ctx.tenantId, id: newId(), created_at: ctx.now, ...row })
    .onConflict((oc) => oc.columns(['tenant_id', 'notification', 'dedupe_key']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function listNotifications(tx: Tx, tenantId: string, limit = 100) {
  return tx
    .selectFrom('notifications')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

// ---- SMS connections ---------------------------------------------------------------------------

const aad = (tenantId: string, id: string) => `sms_connection:${tenantId}:${id}`;

function toSmsConnection(row: SmsConnectionsTable, secrets: SecretBox): SmsConnection {
  const credentials = secrets.openJson<SmsCredentials>(row.credentials_sealed, aad(row.tenant_id, row.id));
  return {
    id: row.id,
    provider: row.provider,
    sender: row.sender,
    account_sid: 'account_sid' in credentials ? `…${credentials.account_sid.slice(-4)}` : null,
    template_id: 'template_id' in credentials ? credentials.template_id : null,
    created_at: toIso(row.created_at),
  };
}

/** A tenant has one SMS provider: a new connection replaces the old. */
export async function createSmsConnection(ctx: Ctx, secrets: SecretBox, body: CreateSmsConnectionBody): Promise<SmsConnection> {
  const id = newId();
  const row: SmsConnectionsTable = {
    tenant_id: ctx.tenantId,
    id,
    provider: body.provider,
    sender: body.sender ?? '',
    credentials_sealed: secrets.sealJson(body.credentials, aad(ctx.tenantId, id)),
    created_at: ctx.now,
  };
  await ctx.tx.deleteFrom('sms_connections').where('tenant_id', '=', ctx.tenantId).execute();
  await ctx.tx.insertInto('sms_connections').values(row).execute();
  return toSmsConnection(row, secrets);
}

export async function listSmsConnections(ctx: ReadCtx, secrets: SecretBox): Promise<SmsConnection[]> {
  const rows = await ctx.tx.selectFrom('sms_connections').selectAll().where('tenant_id', '=', ctx.tenantId).execute();
  return rows.map((r) => toSmsConnection(r, secrets));
}

export async function deleteSmsConnection(ctx: Ctx, id: string): Promise<void> {
  const deleted = await ctx.tx.deleteFrom('sms_connections').where('tenant_id', '=', ctx.tenantId).where('id', '=', id).returning('id').executeTakeFirst();
  if (!deleted) throw errors.notFound('SMS connection');
}

export type SmsSender = {
  providerName: SmsConnectionsTable['provider'];
  provider: SmsProvider;
  credentials: SmsCredentials;
  sender: string;
  connectionId: string;
};

/** The tenant's SMS provider with its opened credentials, or undefined when none is configured. */
export async function smsSenderOf(tx: Tx, tenantId: string, secrets: SecretBox): Promise<SmsSender | undefined> {
  const row = await tx.selectFrom('sms_connections').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!row) return undefined;
  return {
    providerName: row.provider,
    // Each provider is handed the credentials sealed for it (the connection's provider never changes).
    provider: smsProviders[row.provider] as SmsProvider,
    credentials: secrets.openJson<SmsCredentials>(row.credentials_sealed, aad(tenantId, row.id)),
    sender: row.sender,
    connectionId: row.id,
  };
}
