/** The public face of dunning: what the dunning flow, the registration flow and collections use. */
export {
  campaignSteps,
  createDefaultCampaign,
  endExecution,
  raisePaymentWall,
  recordAction,
  startExecution,
  stopExecutionOfInvoice,
} from './dunning.service.js';
export {
  claimDueExecutions,
  deferExecutionStep,
  invoicesAndCustomers,
  overdueInvoicesWithoutDunning,
  type DunnedCustomer,
  type DunnedInvoice,
  type ExecutionRow,
  type StepRow,
} from './dunning.repository.js';
export { paymentRetrier, registerPaymentRetrier, type PaymentRetrier } from './retry.js';
export { renderDunningMail } from './templates.js';
