import { z } from 'zod';
import { emailAddress, envelope } from './common';

/** Spec §5/§9: passwords are at least 8 characters; docs/security.md asks that at least 64 be allowed. */
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 1024;

const newPassword = z
  .string()
  .min(PASSWORD_MIN_LENGTH, 'Password must be at least 8 characters long')
  .max(PASSWORD_MAX_LENGTH, 'Password must be at most 1024 characters long');

export const user = z.object({
  id: z.string(),
  name: z.string(),
  email: z.string(),
  emailVerified: z.boolean(),
  createdAt: z.string(),
});
export type User = z.infer<typeof user>;

export const loginBody = z.object({
  email: emailAddress,
  password: z.string().min(1, 'Password is required').max(PASSWORD_MAX_LENGTH, 'Invalid email or password'),
});
export const loginResponse = envelope(z.object({ user, token: z.string() }));

export const registerBody = z.object({
  name: z.string().trim().min(1, 'Name is required').max(100, 'Name must be at most 100 characters'),
  email: emailAddress,
  password: newPassword,
});

export const setupBody = registerBody.extend({ token: z.string().min(1, 'Invalid or missing setup token').max(200) });
export const setupStatusQuery = z.object({ token: z.string().max(200).optional() });
export const setupStatusResponse = envelope(z.object({ setupRequired: z.boolean(), tokenValid: z.boolean() }));

export const meResponse = envelope(z.object({ user }));

export const profileBody = z
  .object({
    name: z.string().trim().min(1, 'Name is required').max(100, 'Name must be at most 100 characters').optional(),
    email: emailAddress.optional(),
    currentPassword: z.string().max(PASSWORD_MAX_LENGTH).optional(),
    newPassword: newPassword.optional(),
  })
  .strict();

export const forgotPasswordBody = z.object({ email: emailAddress });
export const resetPasswordBody = z.object({
  token: z.string().min(1, 'Invalid or missing reset token').max(200, 'Invalid or expired reset token'),
  password: newPassword,
});
export const verifyEmailBody = z.object({
  token: z.string().min(1, 'Invalid verification link').max(200, 'Invalid or expired verification link'),
});
export const messageResponse = envelope(z.object({ message: z.string() }));

/** One signed-in session of the user (Profile → Sessions); the token itself is never shown. */
export const sessionInfo = z.object({
  created_at: z.string(),
  expires_at: z.string(),
  current: z.boolean(),
});
export type SessionInfo = z.infer<typeof sessionInfo>;
export const sessionsResponse = envelope(z.object({ sessions: z.array(sessionInfo) }));
export const signedOutEverywhereResponse = envelope(z.object({ ended: z.number() }));
