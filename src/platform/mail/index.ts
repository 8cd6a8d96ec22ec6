/** E-mail: the outbox (`enqueueMail` in a business transaction) and the SMTP sender the worker uses. */
export {
  MAIL_JOB,
  MAIL_MAX_ATTEMPTS,
  MAIL_RETRY_DELAYS_MS,
  MAX_INLINE_ATTACHMENT_BYTES,
  enqueueMail,
  mailJobSpec,
  isDeliverableAddress,
  createMailOutbox,
  onMailSent,
  registerAttachmentRenderer,
  type AttachmentRenderer,
  type MailAttachmentSpec,
  type MailDelivery,
  type MailOutbox,
  type MailSentHook,
  type MailSpec,
  type RenderedAttachment,
} from './mail.js';
export { SMTP_POOL, createSmtpMailer, isMailConfigured, parseMailFrom, type Mailer, type OutgoingMail } from './mailer.js';
