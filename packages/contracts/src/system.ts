import { z } from 'zod';
import { envelope } from './common';

/** `herald doctor` and the dashboard's System panel (README, "herald doctor"). */
export const DOCTOR_STATUSES = ['ok', 'warn', 'fail'] as const;
export type DoctorStatus = (typeof DOCTOR_STATUSES)[number];

export const doctorCheck = z.object({
  /** Stable name, e.g. `public-url-https`, `push-fcm`. */
  id: z.string(),
  title: z.string(),
  status: z.enum(DOCTOR_STATUSES),
  /** What was found, with timings where there are some. */
  detail: z.string(),
  /** What to do about a WARN or FAIL; null when OK. */
  action: z.string().nullable(),
});
export type DoctorCheck = z.infer<typeof doctorCheck>;

export const systemChecksResponse = envelope(
  z.object({
    checks: z.array(doctorCheck),
    checkedAt: z.number(),
  }),
);
export type SystemChecks = z.infer<typeof systemChecksResponse>['data'];
