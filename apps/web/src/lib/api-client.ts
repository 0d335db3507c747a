import type { z } from 'zod';
import { readStoredToken } from './auth-store';
import { currentPathname, navigateTo } from './navigation';
import { clearSession } from './session';

/** Spec §7: every call goes to the product's own API under /api. */
export const API_BASE = '/api';

export class ApiError extends Error {
  readonly status: number;
  /** The server's `error.message`, when it sent one (spec §8 "server message, else …"). */
  readonly serverMessage: string | undefined;

  constructor(status: number, serverMessage: string | undefined) {
    super(serverMessage ?? `Request failed with status ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.serverMessage = serverMessage;
  }
}

/** The message to show for a failed call: the server's own, else the screen's fallback text. */
export function errorMessage(error: unknown, fallback: string): string {
  return error instanceof ApiError && error.serverMessage ? error.serverMessage : fallback;
}

type Envelope = z.ZodType<{ data: unknown }>;

interface RequestOptions<S extends Envelope> {
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Sent as JSON; a FormData body goes as multipart/form-data (the browser sets the boundary). */
  body?: unknown;
  /** The response schema from @herald/contracts; the body is checked against it. */
  schema: S;
  signal?: AbortSignal;
}

function readErrorMessage(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || !('error' in body)) return undefined;
  const error = (body as { error: unknown }).error;
  if (typeof error !== 'object' || error === null || !('message' in error)) return undefined;
  const message = (error as { message: unknown }).message;
  return typeof message === 'string' && message.trim() !== '' ? message : undefined;
}

/** Spec §4/§8: any 401 removes the token and sends the visitor to the login page. */
function handleUnauthorized(): void {
  clearSession();
  // On /login itself a 401 is just a wrong password: the form shows the message.
  if (currentPathname() !== '/login') navigateTo('/login', { replace: true });
}

/**
 * The single way the dashboard talks to the API: JSON in and out, the bearer
 * token whenever one is stored, and `{ success, data }` unwrapped to `data`.
 */
export async function apiRequest<S extends Envelope>(path: string, options: RequestOptions<S>): Promise<z.output<S>['data']> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const token = readStoredToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  const isFormData = options.body instanceof FormData;
  if (options.body !== undefined && !isFormData) headers['Content-Type'] = 'application/json';

  const response = await fetch(`${API_BASE}${path}`, {
    method: options.method ?? 'GET',
    headers,
    body: options.body === undefined ? undefined : isFormData ? (options.body as FormData) : JSON.stringify(options.body),
    signal: options.signal,
  });

  const text = await response.text();
  let body: unknown = undefined;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
  }

  if (response.status === 401) handleUnauthorized();
  if (!response.ok) throw new ApiError(response.status, readErrorMessage(body));

  const parsed = options.schema.safeParse(body);
  if (!parsed.success) throw new ApiError(response.status, 'The server sent an unexpected response.');
  return parsed.data.data;
}

/**
 * A file from the API (a CSV report): the same bearer token and 401 handling
 * as apiRequest, the body as a Blob, and the server's file name.
 */
export async function apiDownload(path: string): Promise<{ blob: Blob; fileName: string | undefined }> {
  const headers: Record<string, string> = {};
  const token = readStoredToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(`${API_BASE}${path}`, { headers });
  if (response.status === 401) handleUnauthorized();
  if (!response.ok) {
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      body = undefined;
    }
    throw new ApiError(response.status, readErrorMessage(body));
  }
  const disposition = response.headers.get('content-disposition') ?? '';
  const fileName = /filename="([^"]+)"/.exec(disposition)?.[1];
  return { blob: await response.blob(), fileName };
}

/** Hands a downloaded file to the browser's "save" (a temporary object URL on a clicked link). */
export function saveFile(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  // The click has started the download; the URL is no longer needed once this task ends.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
