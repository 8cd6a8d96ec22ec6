import { z } from 'zod';

/**
 * Every environment variable Kosh reads, in one place. The README's configuration table mirrors
 * this schema; keep them together.
 */
const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: z.string().optional(),
  KOSH_DATA_DIR: z.string().default('./.kosh'),
  KOSH_MODE: z.enum(['test', 'live']).default('test'),
  KOSH_REGISTRATION: z.enum(['open', 'admin']).optional(),
  KOSH_ADMIN_TOKEN: z.string().optional(),
  KOSH_PUBLIC_URL: z.string().optional(),
  KOSH_WORKER: z.enum(['on', 'off']).default('on'),
  KOSH_WORKER_POLL_MS: z.coerce.number().int().min(10).default(500),
  KOSH_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(40),
  KOSH_DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  KOSH_API_KEY_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(10),
  KOSH_LIST_COUNT_CACHE_MS: z.coerce.number().int().min(0).max(3_600_000).default(5000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SMTP_URL: z.string().optional(),
  MAIL_FROM: z.string().default('Kosh Billing <billing@localhost>'),
  KOSH_SECRET_KEY: z.string().optional(),
});

export type Config = {
  port: number;
  host: string;
  databaseUrl: string | undefined;
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
  dbPoolSize: number;
  /** How long a verified API key is trusted without a database lookup (0: never). */
  apiKeyCacheMs: number;
  /** How long a list's total_count may be reused while this process writes nothing for the tenant (0: never). */
  listCountCacheMs: number;
  logLevel: string;
  smtpUrl: string | undefined;
  mailFrom: string;
  /** KOSH_SECRET_KEY (base64 of 32 bytes) sealing third parties' secrets; see platform/secrets. */
  secretKey: string | undefined;
};

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL || undefined,
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
    dbPoolSize: e.KOSH_DB_POOL_SIZE,
    apiKeyCacheMs: e.KOSH_API_KEY_CACHE_SECONDS * 1000,
    listCountCacheMs: e.KOSH_LIST_COUNT_CACHE_MS,
    logLevel: e.LOG_LEVEL,
    smtpUrl: e.SMTP_URL || undefined,
    mailFrom: e.MAIL_FROM,
    secretKey: e.KOSH_SECRET_KEY || undefined,
  };
}
