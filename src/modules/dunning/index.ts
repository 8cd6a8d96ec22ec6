/** The public face of dunning: what the dunning flow, the registration flow and collections use. */
export {
  campaignSteps,
  createDefaultCampaign,
  DUNNING_STEPS_JOB,
  endExecution,
  learnRetryOutcome,
  nextDunningInstant,
  retryArmStatsOf,
  liftWallOfInvoices,
  raisePaymentWall,
  recordAction,
  settleAction,
  startExecution,
  stopExecutionOfInvoice,
  stopExecutionsOfInvoices,
} from './dunning.service.js';
export type { StepMove, DunnedCustomer, DunnedInvoice, ExecutionRow, StepRow } from './dunning.repository.js';
export {
  chooseRetryTime,
  paymentRetrier,
  registerPaymentRetrier,
  SMART_RETRY_HISTORY_DAYS,
  SMART_RETRY_MIN_SAMPLES,
  type PaymentRetrier,
  type RetryHistorySample,
} from './retry.js';
export { renderDunningMail } from './templates.js';
export { armTime, chooseArm, contextKey, retryContext, seedOf, seededRandom, RETRY_ARMS, type ArmStats, type RetryArm } from './bandit.js';
export {
  accessSchema,
  campaignSchema,
  collectionItemSchema,
  createCampaignBody,
  createStepBody,
  deleteCampaignQuery,
  executionSchema,
  listExecutionsQuery,
  overviewQuery,
  overviewSchema,
  weightsSchema,
  stepParams,
  stepSchema,
  updateCampaignBody,
  updateStepBody,
} from './dunning.schemas.js';
export {
  addStep,
  createCampaign,
  customerAccess,
  deleteCampaign,
  deleteStep,
  dunningOverview,
  dunningWeights,
  getCampaign,
  listCampaigns,
  listCollections,
  listExecutions,
  updateCampaign,
  updateStep,
} from './dunning.service.js';
export {
  claimDueExecutions,
  insertActions,
  lockAwaitingActions,
  settleActions,
  moveExecutionSteps,
  invoicesAndCustomers,
  overdueInvoicesWithoutDunning,
  overdueInvoicesInClockScope,
  dueExecutionsInClockScope,
} from './dunning.service.js';
