import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

// What the audit log records about the request a change came from (its client
// address, request.ip: with TRUST_PROXY the one our proxy saw), without
// threading it through every service call.
const storage = new AsyncLocalStorage<{ address: string }>();

/** An onRequest hook: the rest of the request runs inside its context (callback style, so every later hook and the handler inherit it). */
export function requestContextHook(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  storage.run({ address: request.ip }, done);
}

/** The client address of the request being handled, or null outside a request (jobs, the CLI). */
export function currentClientAddress(): string | null {
  return storage.getStore()?.address ?? null;
}
