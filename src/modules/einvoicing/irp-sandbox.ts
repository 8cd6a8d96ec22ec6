import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../platform/config.js';
import { financialYear } from '../tax/index.js';
import { IrpRejection, type IrpClient, type IrpDocumentRef, type IrpRegistration } from './irp-client.js';
import { validateIrpDocument, type IrpDocument } from './irp-document.js';
import { computeIrn } from './irn.js';

/**
 * The built-in IRP: validates the document against the schema, computes the IRN as DESIGN §15
 * says, and signs the QR payload as the IRP does (a JWT, RS256) with a key of its own kept in the
 * data directory (`einvoice-sandbox.pem`), so the whole flow runs with no IRP account.
 * `sandboxPublicKey` verifies what it signs.
 */

let processKey: KeyObject | null = null;

export function sandboxSigningKey(config: Pick<Config, 'dataDir'>): KeyObject {
  if (config.dataDir.startsWith('memory://')) {
    processKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    return processKey;
  }
  const path = join(config.dataDir, 'einvoice-sandbox.pem');
  try {
    return createPrivateKey(readFileSync(path, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(config.dataDir, { recursive: true });
  const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  try {
    writeFileSync(path, pem, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return createPrivateKey(readFileSync(path, 'utf8'));
}

export function sandboxPublicKey(config: Pick<Config, 'dataDir'>): string {
  return createPublicKey(sandboxSigningKey(config)).export({ type: 'spki', format: 'pem' }).toString();
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

export function signJwt(claims: Record<string, unknown>, key: KeyObject): string {
  const head = base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const body = base64url(JSON.stringify(claims));
  return `${head}.${body}.${base64url(sign('sha256', Buffer.from(`${head}.${body}`), key))}`;
}

/** The IRP's dd/mm/yyyy date → the financial year of the IRN. */
function financialYearOf(date: string): string {
  const [dd, mm, yyyy] = date.split('/').map(Number);
  return financialYear(new Date(Date.UTC(yyyy!, mm! - 1, dd!, 12)), 'UTC');
}

/** A 15-digit acknowledgement number, derived from the IRN so a repeat answers the same. */
function ackNumber(irn: string): string {
  return ((BigInt(`0x${irn.slice(0, 24)}`) % 10n ** 14n) + 10n ** 14n).toString();
}

type Doc = {
  DocDtls: { Typ: 'INV' | 'CRN' | 'DBN'; No: string; Dt: string };
  SellerDtls: { Gstin: string };
  BuyerDtls: { Gstin: string };
  ValDtls: { TotInvVal: number };
  ItemList: { HsnCd: string }[];
};

export function createSandboxIrp(config: Pick<Config, 'dataDir'>, now: () => Date): IrpClient {
  const key = sandboxSigningKey(config);
  function register(document: IrpDocument): IrpRegistration {
    const doc = document as unknown as Doc;
    const irn = computeIrn(doc.SellerDtls.Gstin, financialYearOf(doc.DocDtls.Dt), doc.DocDtls.Typ, doc.DocDtls.No);
    const ackDate = now();
    const ackNo = ackNumber(irn);
    const qr = {
      SellerGstin: doc.SellerDtls.Gstin,
      BuyerGstin: doc.BuyerDtls.Gstin,
      DocNo: doc.DocDtls.No,
      DocTyp: doc.DocDtls.Typ,
      DocDt: doc.DocDtls.Dt,
      TotInvVal: doc.ValDtls.TotInvVal,
      ItemCnt: doc.ItemList.length,
      MainHsnCode: doc.ItemList[0]?.HsnCd ?? '',
      Irn: irn,
      IrnDt: ackDate.toISOString(),
    };
    const iat = Math.floor(ackDate.getTime() / 1000);
    const registration = {
      irn,
      ack_no: ackNo,
      ack_date: ackDate,
      signed_invoice: signJwt({ data: JSON.stringify({ ...document, Irn: irn, AckNo: ackNo, AckDt: qr.IrnDt }), iss: 'Kosh sandbox IRP', iat }, key),
      signed_qr_code: signJwt({ data: JSON.stringify(qr), iss: 'Kosh sandbox IRP', iat }, key),
    };
    return registration;
  }
  return {
    async generate(document) {
      const problems = validateIrpDocument(document);
      if (problems.length > 0) throw new IrpRejection('2000', problems.map((p) => p.message).join('; '));
      return register(document);
    },
    async findByDocument(ref: IrpDocumentRef) {
      throw new IrpRejection('2283', `the sandbox keeps no registry to look up ${ref.type} ${ref.number}`);
    },
    async cancel(irn) {
      if (!/^[0-9a-f]{64}$/.test(irn)) throw new IrpRejection('2270', 'invalid IRN');
      return { canceled_at: now() };
    },
  };
}
