import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { createKosh } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
const config = loadConfig({ KOSH_MODE: 'test', LOG_LEVEL: 'silent', KOSH_WORKER: 'off', DATABASE_URL: process.env.DATABASE_URL });
const kosh = await createKosh({ config, logger: pino({ level: 'silent' }) });
const reg = await kosh.app.inject({ method: 'POST', url: '/auth/register', payload: { name: 'B', email: `b${randomUUID()}@x.test` } });
const key = JSON.parse(reg.body).data.api_key.key;
const h = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
let n = 0;
const post = () => kosh.app.inject({ method: 'POST', url: '/v1/plans', headers: { ...h, 'idempotency-key': randomUUID() }, payload: JSON.stringify({ name: `P${++n}`, code: `c-${n}-${randomUUID()}`, interval_unit: 'month', amount: 49900, currency: 'INR', hsn_code: '998314' }) });
for (let i = 0; i < 200; i++) await post();
let c = process.cpuUsage(); let t = performance.now();
for (let i = 0; i < 500; i++) { const r = await post(); if (r.statusCode !== 201) throw new Error(r.body); }
let d = process.cpuUsage(c); console.log('POST cpu/req ms', ((d.user + d.system) / 1000 / 500).toFixed(3), 'wall/req', ((performance.now() - t) / 500).toFixed(3));
for (let i = 0; i < 50; i++) await kosh.app.inject({ method: 'GET', url: '/v1/plans', headers: h });
c = process.cpuUsage(); t = performance.now();
for (let i = 0; i < 300; i++) { const r = await kosh.app.inject({ method: 'GET', url: '/v1/plans', headers: h }); if (r.statusCode !== 200) throw new Error(r.body); }
d = process.cpuUsage(c); console.log('GET cpu/req ms', ((d.user + d.system) / 1000 / 300).toFixed(3), 'wall/req', ((performance.now() - t) / 300).toFixed(3));
await kosh.close();
