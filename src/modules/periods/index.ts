/** Reporting periods and their close (DESIGN §18): what may still change, and when postings are dated. */
export {
  closePeriod,
  filedReturn,
  firstOpenPeriodFrom,
  isPeriodOpenAt,
  listPeriods,
  nextPeriod,
  parsePeriod,
  periodBounds,
  periodOf,
  postingDate,
  postingDates,
  postingTerms,
  recordGstFiling,
  reopenPeriod,
  resolveBegunPeriod,
} from './periods.service.js';
export { gstPeriodParams, periodParams, periodSchema, recordFilingBody, reopenPeriodBody, type Period, type RecordFilingBody } from './periods.schemas.js';
export type { GstReturnKind } from './periods.states.js';
