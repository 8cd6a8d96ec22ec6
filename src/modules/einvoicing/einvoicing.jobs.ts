import type { Job, JobEnv, JobHandler } from '../../platform/jobs/jobs.js';
import { RetryJobAt } from '../../platform/jobs/jobs.js';
import { einvoicingCredentialsAad, findEntity, type EinvoicingCredentials, type EntityRow } from '../entities/index.js';
import type { EinvoiceDocumentType } from './einvoicing.tables.js';
import { einvoicesDueForReportAlert, findEinvoice, findEinvoiceOfDocument, updateEinvoiceRow, type EinvoiceRow } from './einvoicing.repository.js';
import { failEinvoice, prepareSubmission, recordRegistration, toEinvoice } from './einvoicing.service.js';
import { REPORT_ALERT_DAYS } from './report-limit.js';
import { emitEvent } from '../../platform/events/events.js';
import { DUPLICATE_IRN, IrpRejection, IrpUnavailable, type IrpClient, type IrpRegistration } from './irp-client.js';
import type { IrpDocument } from './irp-document.js';
import { createNicIrp } from './irp-nic.js';
import { createSandboxIrp } from './irp-sandbox.js';

/** Retries while the IRP is unreachable: 5 min, 15 min, 1 h, 6 h, 24 h; then the record fails. */
export const SUBMISSION_RETRY_DELAYS_MS = [5 * 60_000, 15 * 60_000, 60 * 60_000, 6 * 60 * 60_000, 24 * 60 * 60_000];

/**
 * The IRP client of an entity's provider (`sandbox` built in; `nic`; `gsp` = the NIC API at the
 * GSP's URL). The address is the deployment's only (KOSH_IRP_NIC_URL, KOSH_IRP_GSP_URL): a
 * `base_url` sealed into older credentials is ignored (decision 0211).
 */
export function irpClientFor(entity: EntityRow, env: JobEnv): IrpClient {
  const provider = entity.einvoicing_provider ?? 'sandbox';
  if (provider === 'sandbox') return createSandboxIrp(env.config, () => env.clock.now());
  if (!entity.einvoicing_credentials) throw new IrpRejection('credentials', `the ${provider} provider needs the IRP credentials`);
  const { base_url: _ignored, ...credentials } = env.secrets.openJson<EinvoicingCredentials & { base_url?: unknown }>(
    entity.einvoicing_credentials,
    einvoicingCredentialsAad(entity.tenant_id, entity.id),
  );
  const baseUrl = provider === 'gsp' ? env.config.irpGspUrl : env.config.irpNicUrl;
  if (!baseUrl) throw new IrpRejection('configuration', 'no GSP address is configured for this deployment (KOSH_IRP_GSP_URL)');
  const publicKey = credentials.public_key ?? env.config.irpPublicKey;
  if (!publicKey) throw new IrpRejection('configuration', "no IRP public key: set KOSH_IRP_PUBLIC_KEY or the credentials' public_key");
  return createNicIrp({ baseUrl, gstin: entity.gstin ?? '', credentials, publicKey });
}

/** What the IRP (or the network) said, in full, for operators: the log, never the record. */
function logIrpFailure(env: JobEnv, tenantId: string, einvoiceId: string, error: unknown): void {
  const detail = error instanceof IrpRejection || error instanceof IrpUnavailable ? error.detail : (error as Error)?.message;
  env.logger.warn({ tenant_id: tenantId, einvoice_id: einvoiceId, error: (error as Error)?.message, detail }, 'IRP call failed');
}

type Prepared = { row: EinvoiceRow; entity: EntityRow; document: IrpDocument };

async function prepare(env: JobEnv, tenantId: string, type: EinvoiceDocumentType, documentId: string): Promise<Prepared | null> {
  return env.db.transaction().execute(async (tx) => {
    const ctx = { tx, tenantId, now: env.clock.now() };
    const row = await findEinvoiceOfDocument(tx, tenantId, type, documentId, true);
    if (!row || row.status !== 'pending') return null;
    const entity = await findEntity(tx, tenantId, row.entity_id);
    if (!entity) return null;
    const document = await prepareSubmission(ctx, row, entity);
    return document ? { row, entity, document } : null;
  });
}

/**
 * Submits a document to the IRP. The document is built and validated in one transaction (a
 * schema failure is stored, never sent), the IRP is called outside any transaction, and the
 * answer is recorded in another. A duplicate-IRN refusal (2150) means an earlier attempt
 * registered it: the registration is fetched and recorded like a fresh one.
 */
export const submitEinvoice: JobHandler = async (job: Job, env: JobEnv) => {
  const tenantId = job.tenant_id!;
  const { document_type: type, document_id: documentId } = job.payload as { document_type: EinvoiceDocumentType; document_id: string };
  const prepared = await prepare(env, tenantId, type, documentId);
  if (!prepared) return;
  const { row, entity, document } = prepared;
  let registration: IrpRegistration | null = null;
  let refusal: IrpRejection | null = null;
  let transient: Error | null = null;
  try {
    const client = irpClientFor(entity, env);
    try {
      registration = await client.generate(document);
    } catch (error) {
      if (!(error instanceof IrpRejection) || error.code !== DUPLICATE_IRN) throw error;
      const docDtls = document.DocDtls as { Typ: 'INV' | 'CRN' | 'DBN'; No: string; Dt: string };
      registration = await client.findByDocument({ type: docDtls.Typ, number: docDtls.No, date: docDtls.Dt });
    }
  } catch (error) {
    if (error instanceof IrpRejection) refusal = error;
    else transient = error as Error;
    logIrpFailure(env, tenantId, row.id, error);
  }
  const retry = await env.db.transaction().execute(async (tx): Promise<RetryJobAt | null> => {
    const ctx = { tx, tenantId, now: env.clock.now() };
    const current = await findEinvoice(tx, tenantId, row.id, true);
    if (!current || current.status !== 'pending') return null;
    if (registration) {
      await recordRegistration(ctx, current, registration, document);
    } else if (refusal) {
      await failEinvoice(ctx, current, [{ code: `irp.${refusal.code}`, message: refusal.message }], document);
    } else {
      const attempts = current.attempts + 1;
      // Kosh's words only: a raw error could carry what the other side answered.
      const message = transient instanceof IrpUnavailable ? transient.message : 'the IRP could not be reached';
      if (attempts > SUBMISSION_RETRY_DELAYS_MS.length) {
        await failEinvoice(
          ctx,
          current,
          [{ code: 'irp.unavailable', message: `the IRP could not be reached after ${attempts} attempts: ${message}` }],
          document,
        );
        return null;
      }
      await updateEinvoiceRow(tx, tenantId, current.id, {
        attempts,
        errors: JSON.stringify([{ code: 'irp.unavailable', message }]),
        document: JSON.stringify(document),
        updated_at: ctx.now,
      });
      // Thrown after the commit, so the attempt count and the error stay recorded.
      return new RetryJobAt(new Date(ctx.now.getTime() + SUBMISSION_RETRY_DELAYS_MS[attempts - 1]!), `IRP unreachable (attempt ${attempts}): ${message}`);
    }
    return null;
  });
  if (retry) throw retry;
};

/** Tells the IRP of a cancellation already recorded (see cancelEinvoice). */
export const cancelEinvoiceAtIrp: JobHandler = async (job: Job, env: JobEnv) => {
  const tenantId = job.tenant_id!;
  const { einvoice_id: id } = job.payload as { einvoice_id: string };
  const row = await findEinvoice(env.db, tenantId, id);
  if (!row || row.status !== 'canceled' || !row.irn) return;
  const entity = await findEntity(env.db, tenantId, row.entity_id);
  if (!entity) return;
  try {
    await irpClientFor(entity, env).cancel(row.irn, row.cancel_reason_code ?? 4, row.cancel_remarks ?? '');
  } catch (error) {
    logIrpFailure(env, tenantId, id, error);
    if (!(error instanceof IrpRejection)) throw error; // unreachable: the worker's backoff retries
    await updateEinvoiceRow(env.db, tenantId, id, {
      errors: JSON.stringify([{ code: `irp.${error.code}`, message: `the IRP refused the cancellation: ${error.message}` }]),
      updated_at: env.clock.now(),
    });
  }
};

/**
 * The IRP's 30-day limit approaching (decision 0363): for every unreported document (pending or
 * failed) whose last reportable day is 5 days away, then 1, `einvoice.report_due` is emitted once
 * per threshold — with `days_left` and `irn_report_by` — in the same transaction that records it.
 */
export const alertIrpReportLimits: JobHandler = async (_job, env) => {
  const now = env.clock.now();
  for (const days of [...REPORT_ALERT_DAYS].sort((a, b) => b - a)) {
    for (;;) {
      const due = await einvoicesDueForReportAlert(env.db, env.config.mode, now, days, 200);
      for (const row of due) {
        await env.db.transaction().execute(async (tx) => {
          const ctx = { tx, tenantId: row.tenant_id, now };
          const entity = await findEntity(tx, row.tenant_id, row.entity_id);
          await updateEinvoiceRow(tx, row.tenant_id, row.id, { report_alerted_days: days, updated_at: now });
          const einvoice = toEinvoice({ ...row, report_alerted_days: days }, entity?.time_zone);
          await emitEvent(ctx, 'einvoice.report_due', { ...einvoice, days_left: days });
        });
      }
      if (due.length < 200) break;
    }
  }
};
