import {
  forgotPasswordBody,
  loginBody,
  loginResponse,
  meResponse,
  messageResponse,
  profileBody,
  registerBody,
  resetPasswordBody,
  setupBody,
  setupStatusQuery,
  sessionsResponse,
  setupStatusResponse,
  signedOutEverywhereResponse,
  verifyEmailBody,
} from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import { ok } from '../../platform/responses';
import { toPublicUser } from './accounts';
import { FORGOT_PASSWORD_MESSAGE, createAuthService } from './service';

/** Spec §7 Auth, plus logout and the owner-setup door for a fresh install. */
export function authRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const auth = createAuthService(ctx);
    const signedIn = requireUser(ctx);
    const tags = ['auth'];

    app.post('/auth/login', { schema: { tags, summary: 'Sign in', body: loginBody, response: { 200: loginResponse } } }, async (request) =>
      ok(await auth.login(request.body.email, request.body.password, request.ip)),
    );

    app.post(
      '/auth/register',
      { schema: { tags, summary: 'Create an account (only when ALLOW_REGISTRATION=true)', body: registerBody, response: { 201: loginResponse } } },
      async (request, reply) => reply.status(201).send(ok(await auth.register(request.body, request.ip))),
    );

    app.post('/auth/logout', { preHandler: signedIn, schema: { tags, summary: 'End this session', response: { 200: messageResponse } } }, async (request) => {
      await auth.logout(currentUser(request).sessionTokenHash);
      return ok({ message: 'Signed out' });
    });

    app.get('/auth/sessions', { preHandler: signedIn, schema: { tags, summary: 'Your live sessions (which one is this)', response: { 200: sessionsResponse } } }, async (request) =>
      ok({ sessions: await auth.sessions(currentUser(request)) }),
    );

    app.post(
      '/auth/sessions/sign-out-everywhere',
      { preHandler: signedIn, schema: { tags, summary: 'End every session of your account, this one included', response: { 200: signedOutEverywhereResponse } } },
      async (request) => ok({ ended: await auth.signOutEverywhere(currentUser(request)) }),
    );

    app.get('/auth/me', { preHandler: signedIn, schema: { tags, summary: 'The signed-in user', response: { 200: meResponse } } }, async (request) => {
      const user = currentUser(request);
      return ok({
        user: toPublicUser({ id: user.id, name: user.name, email: user.email, email_verified_at: user.emailVerifiedAt, created_at: user.createdAt }),
      });
    });

    app.patch(
      '/auth/profile',
      { preHandler: signedIn, schema: { tags, summary: 'Change name, email or password', body: profileBody, response: { 200: meResponse } } },
      async (request) => ok({ user: await auth.updateProfile(currentUser(request), request.body, request.ip) }),
    );

    app.post(
      '/auth/forgot-password',
      { schema: { tags, summary: 'Email a password reset link', body: forgotPasswordBody, response: { 200: messageResponse } } },
      async (request) => {
        auth.forgotPassword(request.body.email);
        return ok({ message: FORGOT_PASSWORD_MESSAGE });
      },
    );

    app.post(
      '/auth/reset-password',
      { schema: { tags, summary: 'Set a new password with an emailed token', body: resetPasswordBody, response: { 200: messageResponse } } },
      async (request) => {
        await auth.resetPassword(request.body.token, request.body.password, request.ip);
        return ok({ message: 'Password reset successful' });
      },
    );

    app.post(
      '/auth/verify-email',
      { schema: { tags, summary: 'Confirm an email address with an emailed token', body: verifyEmailBody, response: { 200: messageResponse } } },
      async (request) => {
        await auth.verifyEmail(request.body.token);
        return ok({ message: 'Email verified' });
      },
    );

    app.post(
      '/auth/resend-verification',
      { preHandler: signedIn, schema: { tags, summary: 'Email a new verification link', response: { 200: messageResponse } } },
      async (request) => {
        await auth.resendVerification(currentUser(request));
        return ok({ message: 'Verification email sent' });
      },
    );

    app.get(
      '/auth/setup',
      { schema: { tags, summary: 'Whether the owner account still has to be created', querystring: setupStatusQuery, response: { 200: setupStatusResponse } } },
      async (request) => ok(await auth.setupStatus(request.query.token)),
    );

    app.post(
      '/auth/setup',
      { schema: { tags, summary: 'Create the owner account with the one-time setup link', body: setupBody, response: { 201: loginResponse } } },
      async (request, reply) => reply.status(201).send(ok(await auth.completeSetup(request.body))),
    );
  };
}
