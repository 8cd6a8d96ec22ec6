import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';
import { TEMPLATE_NAMES } from './templates.js';

export const templateNameParams = z.object({ name: z.enum(TEMPLATE_NAMES) });

export const emailTemplateSchema = z
  .object({
    name: z.enum(TEMPLATE_NAMES),
    subject: z.string(),
    html: z.string(),
    text: z.string().nullable().describe('null: the text part is made from the HTML'),
    customized: z.boolean().describe('false: the default shipped with Kosh'),
    variables: z.array(z.string()).describe('the variables the template can use'),
    updated_at: fields.timestamp().nullable(),
  })
  .meta({ id: 'EmailTemplate' });
export type EmailTemplate = z.infer<typeof emailTemplateSchema>;

export const putTemplateBody = z.object({
  subject: z.string().trim().min(1).max(500),
  html: z.string().min(1).max(100_000),
  text: z.string().max(100_000).nullable().optional(),
});
export type PutTemplateBody = z.infer<typeof putTemplateBody>;

export const previewTemplateBody = z.object({
  invoice_id: z.uuid().optional().describe('render with this invoice and its customer instead of sample data'),
  subject: z.string().max(500).optional().describe('preview this source instead of the saved one'),
  html: z.string().max(100_000).optional(),
  text: z.string().max(100_000).nullable().optional(),
});
export type PreviewTemplateBody = z.infer<typeof previewTemplateBody>;

export const templatePreviewSchema = z
  .object({
    name: z.enum(TEMPLATE_NAMES),
    subject: z.string(),
    html: z.string(),
    text: z.string(),
    data_source: z.enum(['sample', 'invoice']),
    missing_variables: z.array(z.string()).describe('variables the template reads that the data lacks; they render empty'),
  })
  .meta({ id: 'EmailTemplatePreview' });

export const NOTIFICATIONS = ['invoice_finalized', 'payment_receipt', 'payment_failed', 'trial_ending', 'credit_note_issued'] as const;
export type NotificationKind = (typeof NOTIFICATIONS)[number];

export const notificationSettingsSchema = z
  .object(Object.fromEntries(NOTIFICATIONS.map((n) => [n, z.boolean()])) as Record<NotificationKind, z.ZodBoolean>)
  .meta({ id: 'NotificationSettings' });
export type NotificationSettings = Record<NotificationKind, boolean>;

export const updateNotificationSettingsBody = z
  .object(Object.fromEntries(NOTIFICATIONS.map((n) => [n, z.boolean().optional()])) as Record<NotificationKind, z.ZodOptional<z.ZodBoolean>>)
  .strict();

const twilioConnectionBody = z.object({
  provider: z.literal('twilio'),
  sender: z
    .string()
    .regex(/^(\+[1-9]\d{6,14}|MG[0-9a-fA-F]{32})$/, 'must be an E.164 number (+919812345678) or a Twilio Messaging Service SID (MG…)')
    .meta({ example: '+919812345678' }),
  credentials: z.object({
    account_sid: z
      .string()
      .regex(/^AC[0-9a-fA-F]{32}$/, 'must be a Twilio Account SID (AC followed by 32 hex digits)')
      .meta({ example: 'AC0123456789abcdef0123456789abcdef' }),
    auth_token: z.string().min(16).max(128),
  }),
});
const msg91ConnectionBody = z.object({
  provider: z.literal('msg91'),
  sender: z
    .string()
    .regex(/^[A-Za-z0-9]{3,11}$/, 'must be the DLT sender ID (header) registered with MSG91, e.g. KOSHBL')
    .optional()
    .describe("the DLT sender ID; omitted: the template's own")
    .meta({ example: 'KOSHBL' }),
  credentials: z.object({
    auth_key: z.string().min(16).max(128).describe("the MSG91 account's authkey"),
    template_id: z
      .string()
      .regex(/^[A-Za-z0-9]{8,64}$/, 'must be an MSG91 Flow template id')
      .describe('the Flow template the message is sent through; its text reads the variable ##content##')
      .meta({ example: '64f0c2a1d6fc05530b6bd3c2' }),
  }),
});
export const createSmsConnectionBody = z.discriminatedUnion('provider', [twilioConnectionBody, msg91ConnectionBody]);
export type CreateSmsConnectionBody = z.infer<typeof createSmsConnectionBody>;

export const smsConnectionSchema = z
  .object({
    id: z.uuid(),
    provider: z.enum(['twilio', 'msg91']),
    sender: z.string().describe("Twilio: the From number or Messaging Service SID; MSG91: the DLT sender ID, empty for the template's own"),
    account_sid: z.string().nullable().describe('Twilio: the Account SID masked to its last 4 characters (credentials are never returned); null for MSG91'),
    template_id: z.string().nullable().describe('MSG91: the Flow template id; null for Twilio'),
    created_at: fields.timestamp(),
  })
  .meta({ id: 'SmsConnection' });
export type SmsConnection = z.infer<typeof smsConnectionSchema>;
