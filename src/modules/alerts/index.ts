/** The public face of alerts and caps (DESIGN §23). */
export { archiveAlert, blockingAlert, createAlert, evaluateAlerts, evaluateUsageAlerts, listAlerts, toAlert, type UsageBatch } from './alerts.service.js';
export { alertSchema, createAlertBody } from './alerts.schemas.js';
