import { z } from 'zod';
import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { previewEmailTemplate } from '../../flows/notifications/preview-template.js';
import {
  createSmsConnection,
  createSmsConnectionBody,
  deleteSmsConnection,
  emailTemplateSchema,
  getEmailTemplate,
  getNotificationSettings,
  listEmailTemplates,
  listSmsConnections,
  notificationSettingsSchema,
  previewTemplateBody,
  putEmailTemplate,
  putTemplateBody,
  resetEmailTemplate,
  smsConnectionSchema,
  templateNameParams,
  templatePreviewSchema,
  updateNotificationSettings,
  updateNotificationSettingsBody,
} from '../../modules/notifications/index.js';

const tags = ['notifications'];

/** Customer notifications: e-mail templates, which notifications are sent, the SMS provider. */
export function registerNotificationRoutes(app: KoshApp, deps: AppDeps): void {
  app.get(
    '/v1/email-templates',
    { schema: { tags, summary: 'List the e-mail templates (the tenant’s versions or the defaults)', response: { 200: listEnvelope(emailTemplateSchema) } } },
    async (request) => {
      const templates = await listEmailTemplates(readCtx(deps, request));
      return { data: templates, object: 'list' as const, has_more: false, total_count: templates.length };
    },
  );

  app.get(
    '/v1/email-templates/:name',
    { schema: { tags, summary: 'Get an e-mail template', params: templateNameParams, response: { 200: dataEnvelope(emailTemplateSchema) } } },
    async (request) => ({ data: await getEmailTemplate(readCtx(deps, request), request.params.name) }),
  );

  app.put(
    '/v1/email-templates/:name',
    {
      schema: {
        tags,
        summary: 'Override an e-mail template (Handlebars; 400 with the line when it does not compile)',
        params: templateNameParams,
        body: putTemplateBody,
        response: { 200: dataEnvelope(emailTemplateSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await putEmailTemplate(ctx, request.params.name, request.body) } })),
  );

  app.delete(
    '/v1/email-templates/:name',
    { schema: { tags, summary: 'Reset an e-mail template to the default', params: templateNameParams, response: { 200: dataEnvelope(emailTemplateSchema) } } },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await resetEmailTemplate(ctx, request.params.name) } })),
  );

  app.post(
    '/v1/email-templates/:name/preview',
    {
      schema: {
        tags,
        summary: 'Render an e-mail template with sample data or a real invoice (writes nothing)',
        params: templateNameParams,
        body: previewTemplateBody,
        response: { 200: dataEnvelope(templatePreviewSchema) },
      },
    },
    async (request) => ({ data: await previewEmailTemplate(readCtx(deps, request), request.params.name, request.body) }),
  );

  app.get(
    '/v1/notification-settings',
    { schema: { tags, summary: 'Which customer notifications are sent', response: { 200: dataEnvelope(notificationSettingsSchema) } } },
    async (request) => ({ data: await getNotificationSettings(readCtx(deps, request)) }),
  );

  app.patch(
    '/v1/notification-settings',
    {
      schema: {
        tags,
        summary: 'Turn customer notifications on or off',
        body: updateNotificationSettingsBody,
        response: { 200: dataEnvelope(notificationSettingsSchema) },
      },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await updateNotificationSettings(ctx, request.body) } })),
  );

  app.post(
    '/v1/sms-connections',
    {
      schema: {
        tags,
        summary: 'Connect an SMS provider (replaces the current one; credentials are never returned)',
        body: createSmsConnectionBody,
        response: { 201: dataEnvelope(smsConnectionSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await createSmsConnection(ctx, deps.secrets, request.body) } })),
  );

  app.get(
    '/v1/sms-connections',
    { schema: { tags, summary: 'List SMS provider connections', response: { 200: listEnvelope(smsConnectionSchema) } } },
    async (request) => {
      const rows = await listSmsConnections(readCtx(deps, request), deps.secrets);
      return { data: rows, object: 'list' as const, has_more: false, total_count: rows.length };
    },
  );

  app.delete(
    '/v1/sms-connections/:id',
    {
      schema: {
        tags,
        summary: 'Remove the SMS provider connection',
        params: idParams,
        response: { 200: dataEnvelope(z.object({ id: z.uuid(), deleted: z.literal(true) })) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        await deleteSmsConnection(ctx, request.params.id);
        return { status: 200, body: { data: { id: request.params.id, deleted: true as const } } };
      }),
  );
}
