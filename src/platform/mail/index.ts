/** E-mail: the outbox (`enqueueMail` in a business transaction) and the SMTP sender the worker uses. */
export {
  MAIL_JOB,
  MAIL_MAX_ATTEMPTS,
  MAIL_RETRY_DELAYS_MS,
  MAX_INLINE_ATTACHMENT_BYTES,
  enqueueMail,
  mailJobSpec,
  isDeliverableAddress,
  mailJobs,
  onMailSent,
  registerAttachmentRenderer,
  type AttachmentRenderer,
  type MailAttachmentSpec,
  type MailDelivery,
  type MailSentHook,
  type MailSpec,
  type RenderedAttachment,
} from './mail.js';
export { createSmtpMailer, isMailConfigured, parseMailFrom, type Mailer, type OutgoingMail } from './mailer.js';
