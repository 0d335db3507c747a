import type { SystemChecks } from '@herald/contracts';
import type { AppContext } from '../../context';
import { forbidden } from '../../platform/errors';
import { runDoctor, type DoctorOptions } from './doctor';
import { installOwnerId } from './repository';

/**
 * The System panel: `herald doctor`'s checks, for the install's owner only
 * (the first account): they name hosts, paths and configuration that other
 * accounts of a shared install have no business seeing.
 */
export function createSystemService(ctx: AppContext, options: DoctorOptions = {}) {
  return {
    async checks(userId: string): Promise<SystemChecks> {
      if ((await installOwnerId(ctx.db)) !== userId) throw forbidden('Only the owner of this Herald install (its first account) can see its system checks.');
      return { checks: await runDoctor(ctx, options), checkedAt: ctx.clock.now() };
    },
  };
}
