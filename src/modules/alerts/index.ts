/** The public face of alerts and caps (DESIGN §23). */
export { archiveAlert, blockingAlert, createAlert, evaluateAlerts, listAlerts, queueUsageAlertEvaluation, toAlert, type UsageBatch } from './alerts.service.js';
export { alertSchema, createAlertBody } from './alerts.schemas.js';
export { foldPendingUsageAlerts, USAGE_ALERT_FOLD_MS } from './alerts.jobs.js';
