import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { FastifyBaseLogger } from 'fastify';
import type { Metrics } from './metrics';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/** Sends through SMTP_URL with nodemailer. */
export function createSmtpMailer(smtpUrl: string, from: string): Mailer {
  const transport = nodemailer.createTransport(smtpUrl);
  return {
    async send(message) {
      await transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text });
    },
    close: () => transport.close(),
  };
}

/**
 * Without SMTP a self-hoster must still be able to follow a reset link: each
 * mail is written to DATA_DIR/mail as a plain-text file readable by Herald's
 * user only. The log says where the file is, never what it holds: reset and
 * verification links are credentials, and logs are shipped and kept where
 * anyone with log access reads them (docs/security.md, "Links in logs").
 */
export function createOutboxMailer(dataDir: string, from: string, log: FastifyBaseLogger): Mailer {
  const outbox = path.join(dataDir, 'mail');
  return {
    async send(message) {
      await fs.promises.mkdir(outbox, { recursive: true });
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      // A file name holds at most 255 bytes; an address may have 254 characters. Cut, and kept apart from another
      // mail of the same millisecond by a few random characters.
      const safeTo = message.to.replace(/[^A-Za-z0-9@._-]/g, '_').slice(0, 100);
      const file = path.join(outbox, `${stamp}-${safeTo}-${crypto.randomBytes(3).toString('hex')}.txt`);
      const body = `From: ${from}\nTo: ${message.to}\nSubject: ${message.subject}\nDate: ${new Date().toUTCString()}\n\n${message.text}\n`;
      await fs.promises.writeFile(file, body, { mode: 0o600 });
      log.info({ to: message.to, subject: message.subject, file }, `mail (no SMTP_URL set) written to ${file}`);
    },
    close: () => undefined,
  };
}

/** Counts every mail handed over, sent or failed (herald_mails_total). */
export function countMails(mailer: Mailer, metrics: Pick<Metrics, 'mailSent'>): Mailer {
  return {
    async send(message) {
      try {
        await mailer.send(message);
      } catch (error) {
        metrics.mailSent(false);
        throw error;
      }
      metrics.mailSent(true);
    },
    close: () => mailer.close(),
  };
}
