import {
  loginResponse,
  meResponse,
  messageResponse,
  sessionsResponse,
  setupStatusResponse,
  signedOutEverywhereResponse,
  type SessionInfo,
  type User,
} from '@herald/contracts';
import { useMutation, useQuery } from '@tanstack/react-query';
import { apiRequest } from '../../lib/api-client';

// Spec §7 Auth. Each call's fetcher sits next to the hook a screen uses.

export interface Credentials {
  email: string;
  password: string;
}

export function login(credentials: Credentials) {
  return apiRequest('/auth/login', { method: 'POST', body: credentials, schema: loginResponse });
}

export function useLoginMutation() {
  return useMutation({ mutationFn: login });
}

export function logout() {
  return apiRequest('/auth/logout', { method: 'POST', schema: messageResponse });
}

export function useLogoutMutation() {
  return useMutation({ mutationFn: logout });
}

export const meQueryKey = ['auth', 'me'] as const;

export async function fetchMe(): Promise<User> {
  return (await apiRequest('/auth/me', { schema: meResponse })).user;
}

/** The signed-in user, read back from the server when only a stored token is known. */
export function useMeQuery(enabled: boolean) {
  return useQuery({ queryKey: meQueryKey, queryFn: fetchMe, enabled });
}

export function forgotPassword(email: string) {
  return apiRequest('/auth/forgot-password', { method: 'POST', body: { email }, schema: messageResponse });
}

export function useForgotPasswordMutation() {
  return useMutation({ mutationFn: forgotPassword });
}

export function resetPassword(input: { token: string; password: string }) {
  return apiRequest('/auth/reset-password', { method: 'POST', body: input, schema: messageResponse });
}

export function useResetPasswordMutation() {
  return useMutation({ mutationFn: resetPassword });
}

export function verifyEmail(token: string) {
  return apiRequest('/auth/verify-email', { method: 'POST', body: { token }, schema: messageResponse });
}

export function useVerifyEmailMutation() {
  return useMutation({ mutationFn: verifyEmail });
}

export function resendVerification() {
  return apiRequest('/auth/resend-verification', { method: 'POST', schema: messageResponse });
}

export function useResendVerificationMutation() {
  return useMutation({ mutationFn: resendVerification });
}

export const setupStatusQueryKey = (token: string) => ['auth', 'setup', token] as const;

export function fetchSetupStatus(token: string) {
  const query = token ? `?token=${encodeURIComponent(token)}` : '';
  return apiRequest(`/auth/setup${query}`, { schema: setupStatusResponse });
}

/** Whether the owner account still has to be created, and whether this link may create it. */
export function useSetupStatusQuery(token: string) {
  return useQuery({ queryKey: setupStatusQueryKey(token), queryFn: () => fetchSetupStatus(token) });
}

export function completeSetup(input: { token: string; name: string; email: string; password: string }) {
  return apiRequest('/auth/setup', { method: 'POST', body: input, schema: loginResponse });
}

export function useCompleteSetupMutation() {
  return useMutation({ mutationFn: completeSetup });
}

// ---- Profile (name, email, password) and sessions

export function updateProfile(changes: { name?: string; email?: string; currentPassword?: string; newPassword?: string }) {
  return apiRequest('/auth/profile', { method: 'PATCH', body: changes, schema: meResponse });
}

export function useUpdateProfileMutation() {
  return useMutation({ mutationFn: updateProfile });
}

export const sessionsQueryKey = ['auth', 'sessions'] as const;

export async function fetchSessions(): Promise<SessionInfo[]> {
  return (await apiRequest('/auth/sessions', { schema: sessionsResponse })).sessions;
}

export function useSessionsQuery() {
  return useQuery({ queryKey: sessionsQueryKey, queryFn: fetchSessions });
}

export function signOutEverywhere() {
  return apiRequest('/auth/sessions/sign-out-everywhere', { method: 'POST', schema: signedOutEverywhereResponse });
}

export function useSignOutEverywhereMutation() {
  return useMutation({ mutationFn: signOutEverywhere });
}
