import { z } from 'zod';
import type { DatabaseTimeouts } from './db/database.js';

/**
 * Every environment variable Kosh reads, in one place. The README's configuration table mirrors
 * this schema; keep them together.
 */
const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: z.string().optional(),
  DATABASE_READ_URL: z.string().optional(),
  KOSH_DATA_DIR: z.string().default('./.kosh'),
  KOSH_MODE: z.enum(['test', 'live']).default('test'),
  KOSH_REGISTRATION: z.enum(['open', 'admin']).optional(),
  KOSH_ADMIN_TOKEN: z
    .string()
    .optional()
    .refine((v) => !v || v.length >= 32, 'must be at least 32 characters (e.g. `openssl rand -hex 32`)'),
  KOSH_PUBLIC_URL: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
  KOSH_METRICS_TOKEN: z
    .string()
    .optional()
    .refine((v) => !v || v.length >= 16, 'must be at least 16 characters'),
  KOSH_TRUST_PROXY: z.enum(['on', 'off']).default('off'),
  KOSH_RATE_LIMIT_KEY_PER_MINUTE: z.coerce.number().int().min(0).optional(),
  KOSH_RATE_LIMIT_IP_PER_MINUTE: z.coerce.number().int().min(0).optional(),
  KOSH_RATE_LIMIT_ADMIN_FAILURES: z.coerce.number().int().min(0).default(10),
  KOSH_RATE_LIMIT_PORTAL_LOGIN: z.coerce.number().int().min(0).default(30),
  KOSH_RATE_LIMIT_GIFT_CODE_FAILURES: z.coerce.number().int().min(0).default(20),
  KOSH_RATE_LIMIT_SIGN_IN_FAILURES: z.coerce.number().int().min(0).default(10),
  KOSH_RATE_LIMIT_SIGN_IN_FAILURES_PER_EMAIL: z.coerce.number().int().min(0).default(50),
  KOSH_WORKER: z.enum(['on', 'off']).default('on'),
  KOSH_WORKER_POLL_MS: z.coerce.number().int().min(10).default(500),
  KOSH_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(40),
  KOSH_USAGE_RETENTION_MONTHS: z.coerce.number().int().min(3).max(1200).optional(),
  KOSH_WORKER_TENANT_CONCURRENCY: z.coerce.number().int().min(1).max(1000).optional(),
  KOSH_WORKER_ENDPOINT_CONCURRENCY: z.coerce.number().int().min(1).max(1000).optional(),
  KOSH_DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  KOSH_DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  KOSH_DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  KOSH_DB_LOCK_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  KOSH_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  KOSH_DB_STARTUP_WAIT_MS: z.coerce.number().int().min(0).default(60_000),
  KOSH_API_KEY_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(10),
  KOSH_LIST_COUNT_CACHE_MS: z.coerce.number().int().min(0).max(3_600_000).default(5000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SMTP_URL: z.string().optional(),
  /** The operator's TDS code table, a JSON array (decision 0610; validated by the invoices API at start-up). */
  KOSH_TDS_CODES: z.string().optional(),
  MAIL_FROM: z.string().default('Kosh Billing <billing@localhost>'),
  KOSH_SECRET_KEY: z.string().optional(),
  KOSH_RAZORPAY_API_BASE: z.string().url().default('https://api.razorpay.com'),
  KOSH_STRIPE_API_BASE: z.string().url().default('https://api.stripe.com'),
  KOSH_TWILIO_API_BASE: z.string().url().default('https://api.twilio.com'),
  KOSH_MSG91_API_BASE: z.string().url().default('https://control.msg91.com'),
  // Accounting providers (DESIGN §16): OAuth clients and endpoints. Endpoints default to the
  // providers' production URLs; tests point them at local servers.
  KOSH_QUICKBOOKS_CLIENT_ID: z.string().optional(),
  KOSH_QUICKBOOKS_CLIENT_SECRET: z.string().optional(),
  KOSH_QUICKBOOKS_AUTHORIZE_URL: z.url().default('https://appcenter.intuit.com/connect/oauth2'),
  KOSH_QUICKBOOKS_TOKEN_URL: z.url().default('https://oauth.platform.intuit.com/oauth2/v1/tokens/bearer'),
  KOSH_QUICKBOOKS_REVOKE_URL: z.url().default('https://developer.api.intuit.com/v2/oauth2/tokens/revoke'),
  KOSH_QUICKBOOKS_API_URL: z.url().default('https://quickbooks.api.intuit.com'),
  KOSH_XERO_CLIENT_ID: z.string().optional(),
  KOSH_XERO_CLIENT_SECRET: z.string().optional(),
  KOSH_XERO_AUTHORIZE_URL: z.url().default('https://login.xero.com/identity/connect/authorize'),
  KOSH_XERO_TOKEN_URL: z.url().default('https://identity.xero.com/connect/token'),
  KOSH_XERO_REVOKE_URL: z.url().default('https://identity.xero.com/connect/revocation'),
  KOSH_XERO_CONNECTIONS_URL: z.url().default('https://api.xero.com/connections'),
  KOSH_XERO_API_URL: z.url().default('https://api.xero.com/api.xro/2.0'),
  KOSH_ZOHO_CLIENT_ID: z.string().optional(),
  KOSH_ZOHO_CLIENT_SECRET: z.string().optional(),
  /** Zoho data centre: `in` (India) or `com` (United States). */
  KOSH_ZOHO_DATA_CENTRE: z.enum(['in', 'com']).default('in'),
  KOSH_ZOHO_ACCOUNTS_URL: z.url().optional(),
  KOSH_ZOHO_API_URL: z.url().optional(),
  KOSH_TEST_GATEWAY_JOURNAL: z.string().optional(),
  KOSH_IRP_NIC_URL: z.string().default('https://einv-apisandbox.nic.in'),
  KOSH_IRP_GSP_URL: z.string().optional(),
  // Lets a test-mode deployment send tenant-influenced requests (webhooks) to private and loopback
  // addresses, for tests and local development; refused in live mode (decision 0210).
  KOSH_OUTBOUND_ALLOW_PRIVATE: z.enum(['0', '1']).default('0'),
  KOSH_IRP_PUBLIC_KEY: z.string().optional(),
});

/** Where an accounting provider's OAuth and API live, and Kosh's client there. */
export type AccountingProviderConfig = {
  clientId: string | undefined;
  clientSecret: string | undefined;
  authorizeUrl: string;
  tokenUrl: string;
  revokeUrl: string;
  apiUrl: string;
  /** Xero only: the endpoint listing the organisations a token may use. */
  connectionsUrl?: string;
};

export type Config = {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  /** A streaming replica for reports, exports and analytics (decision 0324); unset: the primary. */
  readDatabaseUrl: string | undefined;
  dataDir: string;
  mode: 'test' | 'live';
  /** `open`: anyone may register a tenant; `admin`: registration needs KOSH_ADMIN_TOKEN. */
  registration: 'open' | 'admin';
  adminToken: string | undefined;
  publicUrl: string;
  runWorker: boolean;
  workerPollMs: number;
  /** Most jobs the started worker runs at once (webhook deliveries, e-mail…). */
  workerConcurrency: number;
  /** Most running jobs of one tenant across all workers; undefined: half of workerConcurrency. */
  workerTenantConcurrency: number | undefined;
  /** Months of usage events kept (whole months dropped by the worker); undefined keeps them all. */
  usageRetentionMonths: number | undefined;
  /** Most running deliveries to one webhook endpoint across all workers; undefined: a quarter of workerConcurrency. */
  workerEndpointConcurrency: number | undefined;
  dbPoolSize: number;
  /** Limits on PostgreSQL server connections (platform/db/database.ts). */
  dbTimeouts: DatabaseTimeouts;
  /** How long start-up keeps retrying a database that refuses connections before giving up. */
  dbStartupWaitMs: number;
  /** How long a verified API key is trusted without a database lookup (0: never). */
  apiKeyCacheMs: number;
  /** How long a list's total_count may be reused while this process writes nothing for the tenant (0: never). */
  listCountCacheMs: number;
  logLevel: string;
  smtpUrl: string | undefined;
  /** KOSH_TDS_CODES as given: a JSON array of TDS code entries (decision 0610). */
  tdsCodes?: string;
  mailFrom: string;
  /** KOSH_SECRET_KEY (base64 of 32 bytes) sealing third parties' secrets; see platform/secrets. */
  secretKey: string | undefined;
  /** Base URLs of the payment gateways' APIs (tests aim them at local servers). */
  razorpayApiBase: string;
  stripeApiBase: string;
  /** Base URL of Twilio's REST API (the SMS provider of dunning's `sms` steps). */
  twilioApiBase: string;
  /** Base URL of MSG91's API (the other SMS provider). */
  msg91ApiBase: string;
  accounting: { quickbooks: AccountingProviderConfig; xero: AccountingProviderConfig; zoho_books: AccountingProviderConfig };
  /** Bearer token `/metrics` requires (KOSH_METRICS_TOKEN); in live mode `/metrics` is closed without one. */
  metricsToken: string | undefined;
  /** KOSH_TRUST_PROXY=on: the client address comes from X-Forwarded-For (behind a load balancer). */
  trustProxy: boolean;
  rateLimits: RateLimits;
  /** The test gateway's journal file (charges and refunds it made); unset: kept in memory. */
  testGatewayJournal: string | undefined;
  /** Base URL of the NIC e-invoice API (IRP), and of a GSP exposing the same API. */
  irpNicUrl: string;
  irpGspUrl: string | undefined;
  /** Tenant-influenced requests (webhooks) may reach private addresses: test deployments only. */
  outboundAllowPrivate: boolean;
  /** The IRP's RSA public key (PEM) encrypting the app key at authentication. */
  irpPublicKey: string | undefined;
};

/**
 * Request budgets (platform/http/rate-limits.ts). 0 turns a limit off. The `/v1` budgets are per
 * minute; the others count per client address over RATE_LIMIT_ABUSE_WINDOW_MS (15 minutes).
 */
export type RateLimits = {
  /** `/v1` requests per API key per minute. */
  perKey: number;
  /** `/v1` requests per client address per minute (keys or not). */
  perIp: number;
  /** Failed admin-token attempts (`POST /auth/register`) per address. */
  adminFailures: number;
  /** Portal sign-in e-mail requests per address. */
  portalLogin: number;
  /** Wrong gift codes per address (portal redemption). */
  giftCodeFailures: number;
  /** Failed operator sign-ins (wrong password, TOTP or recovery code) per e-mail and address. */
  signInFailures: number;
  /** Failed operator sign-ins per e-mail from every address together (decision 0222). */
  signInFailuresPerEmail: number;
};

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  if (e.KOSH_MODE === 'live' && !e.KOSH_PUBLIC_URL) {
    // Sign-in links and checkout URLs are built from it; a guessed localhost URL would be wrong.
    throw new Error('Invalid configuration: KOSH_PUBLIC_URL: required in live mode (the https address customers reach Kosh at)');
  }
  if (e.KOSH_MODE === 'live' && e.KOSH_OUTBOUND_ALLOW_PRIVATE === '1') {
    throw new Error(
      'Invalid configuration: KOSH_OUTBOUND_ALLOW_PRIVATE: not allowed in live mode (requests to tenant URLs never reach private addresses there)',
    );
  }
  const test = e.KOSH_MODE === 'test';
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL || undefined,
    readDatabaseUrl: e.DATABASE_READ_URL || undefined,
    dataDir: e.KOSH_DATA_DIR,
    mode: e.KOSH_MODE,
    // Open registration is the friendly default for a test-mode deployment; a live deployment
    // must opt in explicitly.
    registration: e.KOSH_REGISTRATION ?? (e.KOSH_MODE === 'test' ? 'open' : 'admin'),
    adminToken: e.KOSH_ADMIN_TOKEN || undefined,
    publicUrl: e.KOSH_PUBLIC_URL ?? `http://localhost:${e.PORT}`,
    runWorker: e.KOSH_WORKER === 'on',
    workerPollMs: e.KOSH_WORKER_POLL_MS,
    workerConcurrency: e.KOSH_WORKER_CONCURRENCY,
    workerTenantConcurrency: e.KOSH_WORKER_TENANT_CONCURRENCY,
    usageRetentionMonths: e.KOSH_USAGE_RETENTION_MONTHS,
    workerEndpointConcurrency: e.KOSH_WORKER_ENDPOINT_CONCURRENCY,
    dbPoolSize: e.KOSH_DB_POOL_SIZE,
    dbTimeouts: {
      connectMs: e.KOSH_DB_CONNECT_TIMEOUT_MS,
      statementMs: e.KOSH_DB_STATEMENT_TIMEOUT_MS,
      lockMs: e.KOSH_DB_LOCK_TIMEOUT_MS,
      idleInTransactionMs: e.KOSH_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    },
    dbStartupWaitMs: e.KOSH_DB_STARTUP_WAIT_MS,
    apiKeyCacheMs: e.KOSH_API_KEY_CACHE_SECONDS * 1000,
    listCountCacheMs: e.KOSH_LIST_COUNT_CACHE_MS,
    logLevel: e.LOG_LEVEL,
    smtpUrl: e.SMTP_URL || undefined,
    tdsCodes: e.KOSH_TDS_CODES || undefined,
    mailFrom: e.MAIL_FROM,
    secretKey: e.KOSH_SECRET_KEY || undefined,
    razorpayApiBase: e.KOSH_RAZORPAY_API_BASE.replace(/\/+$/, ''),
    stripeApiBase: e.KOSH_STRIPE_API_BASE.replace(/\/+$/, ''),
    twilioApiBase: e.KOSH_TWILIO_API_BASE.replace(/\/+$/, ''),
    msg91ApiBase: e.KOSH_MSG91_API_BASE.replace(/\/+$/, ''),
    accounting: accountingConfig(e),
    testGatewayJournal: e.KOSH_TEST_GATEWAY_JOURNAL || undefined,
    irpNicUrl: e.KOSH_IRP_NIC_URL,
    irpGspUrl: e.KOSH_IRP_GSP_URL || undefined,
    outboundAllowPrivate: e.KOSH_OUTBOUND_ALLOW_PRIVATE === '1',
    irpPublicKey: e.KOSH_IRP_PUBLIC_KEY?.replace(/\\n/g, '\n') || undefined,
    metricsToken: e.KOSH_METRICS_TOKEN || undefined,
    trustProxy: e.KOSH_TRUST_PROXY === 'on',
    rateLimits: {
      // Test mode serves test suites that call hundreds of times a second from one address.
      perKey: e.KOSH_RATE_LIMIT_KEY_PER_MINUTE ?? (test ? 100_000 : 6_000),
      perIp: e.KOSH_RATE_LIMIT_IP_PER_MINUTE ?? (test ? 100_000 : 12_000),
      adminFailures: e.KOSH_RATE_LIMIT_ADMIN_FAILURES,
      portalLogin: e.KOSH_RATE_LIMIT_PORTAL_LOGIN,
      giftCodeFailures: e.KOSH_RATE_LIMIT_GIFT_CODE_FAILURES,
      signInFailures: e.KOSH_RATE_LIMIT_SIGN_IN_FAILURES,
      signInFailuresPerEmail: e.KOSH_RATE_LIMIT_SIGN_IN_FAILURES_PER_EMAIL,
    },
  };
}

function accountingConfig(e: z.infer<typeof envSchema>): Config['accounting'] {
  const zohoAccounts = (e.KOSH_ZOHO_ACCOUNTS_URL ?? `https://accounts.zoho.${e.KOSH_ZOHO_DATA_CENTRE}`).replace(/\/$/, '');
  return {
    quickbooks: {
      clientId: e.KOSH_QUICKBOOKS_CLIENT_ID || undefined,
      clientSecret: e.KOSH_QUICKBOOKS_CLIENT_SECRET || undefined,
      authorizeUrl: e.KOSH_QUICKBOOKS_AUTHORIZE_URL,
      tokenUrl: e.KOSH_QUICKBOOKS_TOKEN_URL,
      revokeUrl: e.KOSH_QUICKBOOKS_REVOKE_URL,
      apiUrl: e.KOSH_QUICKBOOKS_API_URL.replace(/\/$/, ''),
    },
    xero: {
      clientId: e.KOSH_XERO_CLIENT_ID || undefined,
      clientSecret: e.KOSH_XERO_CLIENT_SECRET || undefined,
      authorizeUrl: e.KOSH_XERO_AUTHORIZE_URL,
      tokenUrl: e.KOSH_XERO_TOKEN_URL,
      revokeUrl: e.KOSH_XERO_REVOKE_URL,
      apiUrl: e.KOSH_XERO_API_URL.replace(/\/$/, ''),
      connectionsUrl: e.KOSH_XERO_CONNECTIONS_URL,
    },
    zoho_books: {
      clientId: e.KOSH_ZOHO_CLIENT_ID || undefined,
      clientSecret: e.KOSH_ZOHO_CLIENT_SECRET || undefined,
      authorizeUrl: `${zohoAccounts}/oauth/v2/auth`,
      tokenUrl: `${zohoAccounts}/oauth/v2/token`,
      revokeUrl: `${zohoAccounts}/oauth/v2/token/revoke`,
      apiUrl: (e.KOSH_ZOHO_API_URL ?? `https://www.zohoapis.${e.KOSH_ZOHO_DATA_CENTRE}/books/v3`).replace(/\/$/, ''),
    },
  };
}
