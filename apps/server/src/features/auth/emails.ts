import type { MailMessage } from '../../platform/mail';

// Links are built from PUBLIC_URL, never from the request's Host header (docs/security.md).

export function passwordResetMail(to: string, publicUrl: string, token: string): MailMessage {
  const link = `${publicUrl}/reset-password?token=${encodeURIComponent(token)}`;
  return {
    to,
    subject: 'Reset your Herald password',
    text: [
      'Someone (hopefully you) asked to reset the password of your Herald account.',
      '',
      `Choose a new password here: ${link}`,
      '',
      'The link works once and expires in 1 hour. If you did not ask for this, ignore this email: your password stays as it is.',
    ].join('\n'),
  };
}

export function verificationMail(to: string, publicUrl: string, token: string): MailMessage {
  const link = `${publicUrl}/verify-email?token=${encodeURIComponent(token)}`;
  return {
    to,
    subject: 'Verify your email for Herald',
    text: ['Please confirm that this is your email address:', '', link, '', 'The link expires in 24 hours.'].join('\n'),
  };
}
