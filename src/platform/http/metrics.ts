import client from 'prom-client';
import type { FastifyInstance } from 'fastify';
import type { JobBacklog } from '../jobs/jobs.js';

/**
 * Prometheus metrics (one registry per app instance, so tests can run several apps in a process):
 * requests by route and status, latency histograms, and the job-queue depth read at scrape time.
 */
export function registerMetrics(app: FastifyInstance, queueDepth: () => Promise<number>, backlog?: () => Promise<JobBacklog>): client.Registry {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const requests = new client.Counter({
    name: 'kosh_http_requests_total',
    help: 'HTTP requests by route, method and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const latency = new client.Histogram({
    name: 'kosh_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  new client.Gauge({
    name: 'kosh_job_queue_depth',
    help: 'Jobs pending or running',
    registers: [registry],
    async collect() {
      try {
        this.set(await queueDepth());
      } catch {
        // The database may be unreachable; /readyz reports that. Leave the gauge as it was.
      }
    },
  });

  if (backlog) {
    // One query at scrape time feeds the three gauges below.
    let reading: Promise<JobBacklog | null> | null = null;
    const read = () => {
      reading ??= backlog()
        .catch(() => null)
        .finally(() => setTimeout(() => (reading = null), 0));
      return reading;
    };
    new client.Gauge({
      name: 'kosh_job_backlog',
      help: 'Jobs due and not yet claimed, by priority class (money, notices, deliveries, background)',
      labelNames: ['priority'] as const,
      registers: [registry],
      async collect() {
        const b = await read();
        for (const c of b?.classes ?? []) this.set({ priority: c.priority }, c.due);
      },
    });
    new client.Gauge({
      name: 'kosh_job_oldest_due_seconds',
      help: 'How long the oldest due, unclaimed job of each priority class has waited',
      labelNames: ['priority'] as const,
      registers: [registry],
      async collect() {
        const b = await read();
        for (const c of b?.classes ?? []) this.set({ priority: c.priority }, c.oldest_due_seconds);
      },
    });
    new client.Gauge({
      name: 'kosh_jobs_running',
      help: 'Jobs claimed and running, all workers together',
      registers: [registry],
      async collect() {
        const b = await read();
        if (b) this.set(b.running);
      },
    });
  }

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    latency.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });
  return registry;
}
